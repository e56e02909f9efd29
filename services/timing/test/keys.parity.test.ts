/**
 * The two ways a key is checked agree on every key state: `authenticateKey` (the pipeline, punch reads, the
 * key service) and `uploadPunchesByKey` (the fast lane's upload, which looks the key up inside
 * `upload_punch_batch_by_key` to stay one round trip). Both take their rules from one definition —
 * `keyLookupHash` (auth/keys.ts) and the SQL function `active_key_owner` (migration 0008) — and this test runs
 * every state through both: valid user and admin keys, a revoked key, unknown and malformed keys, and keys
 * whose role decides the upload (another user's modem). Keys have no expiry in this API (timing spec §5).
 */
import { ApiError } from '@sports-timing/shared';
import { keyLookupHash } from '../src/auth/keys';
import { uploadPunchBatchByKey } from '../src/punches/punches.repository';
import { uploadPunches, uploadPunchesByKey, type PunchDeps, type UploadResult } from '../src/punches/punches.service';
import { authenticateKey } from '../src/users/users.service';
import { localMs, startTiming, upload, type TestUser, type TimingTestContext } from './helpers';

let ctx: TimingTestContext;
let deps: PunchDeps;
let owner: TestUser;
let other: TestUser;
let revoked: TestUser;

beforeAll(async () => {
  ctx = await startTiming();
  deps = { db: ctx.database.db, pool: ctx.database.pool };
  owner = await ctx.createUser('owner');
  other = await ctx.createUser('other');
  revoked = await ctx.createUser('revoked');
  // Modems registered before the comparison, so both paths take their one-call branch.
  await upload(ctx, owner.key, [{ card: '1', time: localMs(8), code: 31, type: 'Control', modem: 'OWN-1' }]);
  await upload(ctx, revoked.key, [{ card: '1', time: localMs(8), code: 31, type: 'Control', modem: 'REV-1' }]);
  await ctx.database.pool.query('update api_keys set revoked_at = now() where user_id = $1', [revoked.id]);
});
afterAll(async () => ctx.close());

type Outcome = { status: number } | UploadResult;

async function outcome(run: () => Promise<UploadResult>): Promise<Outcome> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status };
    throw err;
  }
}

let card = 100;
/** A punch no earlier upload has stored (a fresh card per call). */
const fresh = (modem: string) => [{ card: String(card++), time: localMs(9), code: 31, type: 'Control' as const, modem }];

describe('key states', () => {
  const states: [string, () => string, string][] = [
    ['a valid user key on its own modem', () => owner.key, 'OWN-1'],
    ['a valid user key on another user\'s modem', () => other.key, 'OWN-1'],
    ['a valid admin key on another user\'s modem', () => ctx.adminKey, 'OWN-1'],
    ['a revoked key on its own modem', () => revoked.key, 'REV-1'],
    ['an unknown key in the key format', () => `tk_${'A'.repeat(43)}`, 'OWN-1'],
    ['a malformed key (a word)', () => 'secret', 'OWN-1'],
    ['a malformed key (non-ASCII)', () => 'tk_ключ', 'OWN-1'],
    ['an unknown key of the longest length looked up', () => 'k'.repeat(256), 'OWN-1'],
    ['a key too long to look up', () => 'k'.repeat(257), 'OWN-1'],
  ];

  it.each(states)('%s: same owner, same answer on both paths', async (_name, keyOf, modem) => {
    const key = keyOf();
    const viaKeyService = await outcome(async () => uploadPunches(deps, await authenticateKey(deps.db, key), fresh(modem), Date.now()));
    const viaOneCall = await outcome(() => uploadPunchesByKey(deps, key, fresh(modem), Date.now()));
    expect(viaOneCall).toEqual(viaKeyService);

    // The owner each path resolves, compared directly (the one-call path with a batch it cannot store).
    const principal = await authenticateKey(deps.db, key).catch(() => null);
    const hash = keyLookupHash(key);
    const resolved = hash === undefined ? null : (await uploadPunchBatchByKey(deps.pool, hash, [])).owner;
    expect(resolved).toEqual(principal && { keyId: principal.keyId, userId: principal.userId, userName: principal.userName, role: principal.role });
  });

  it('covers accepted and refused keys alike (the comparison above is not vacuous)', async () => {
    const answers = await Promise.all(states.map(([, keyOf, modem]) => outcome(() => uploadPunchesByKey(deps, keyOf(), fresh(modem), Date.now()))));
    expect(answers.map((a) => ('status' in a ? a.status : 200))).toEqual([200, 403, 200, 401, 401, 401, 401, 401, 401]);
  });
});
