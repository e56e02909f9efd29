/**
 * The upload fast lane's memo of API keys found valid (docs/decisions.md §5 "Work before authentication"):
 * the principal of each key that authenticated an upload, by the key's lookup hash (auth/keys.ts). It only
 * decides whether the lane reads a body before the upload's statement authenticates the key again
 * (punches.service.ts `uploadPunches` with `keyHash`), so an upload with a known key is one round trip and a
 * revocation still takes effect at the next statement: a key the statement refuses is forgotten, so a revoked
 * key costs at most one more body per instance, and an unknown key is never kept (it costs a lookup every time).
 * Made once per app by the composition (composition.ts), never module-level.
 */
import { LRUCache } from 'lru-cache';
import type { Principal } from '../auth/principal';

/** Keys kept (the least recently used beyond it are dropped) and how long one is kept without use (ms). */
const MAX_KEYS = 5_000;
const KEEP_MS = 60_000;

/** One app's memo of valid keys (see the module comment). */
export class KeyOwnerMemo {
  private readonly owners = new LRUCache<string, Principal>({ max: MAX_KEYS, ttl: KEEP_MS, updateAgeOnGet: true });

  /** The principal last seen for the key with lookup hash `keyHash`, or undefined when none is kept. */
  get(keyHash: Buffer): Principal | undefined {
    return this.owners.get(keyHash.toString('base64'));
  }

  /** Keeps `owner` as the principal of the key with lookup hash `keyHash` (after a statement accepted it). */
  remember(keyHash: Buffer, owner: Principal): void {
    this.owners.set(keyHash.toString('base64'), owner);
  }

  /** Forgets the key with lookup hash `keyHash` (a statement refused it: unknown or revoked). */
  forget(keyHash: Buffer): void {
    this.owners.delete(keyHash.toString('base64'));
  }
}
