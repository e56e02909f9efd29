/**
 * The send timeout of punch streams (docs/architecture.md "Slow readers"): a stream whose unsent bytes (the
 * socket's userland buffer, `writableLength`) stay above {@link SendBound.maxBufferedBytes} for longer than
 * {@link SendBound.timeoutMs} belongs to a peer that reads nothing (or far too slowly). It is closed; the client
 * resumes with `Last-Event-ID` and misses nothing, and the slot and the memory it held are free again.
 */
import type { Response } from 'express';
import { DEFAULT_SEND_TIMEOUT_MS } from '../config';

/** Unsent bytes a stream may hold before its send timeout runs (1 MiB: several full pages of SSE). */
const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/** The bound: buffered bytes and how long a stream may stay above them (ms). */
export interface SendBound {
  maxBufferedBytes: number;
  timeoutMs: number;
}

/** The default bound. */
export const DEFAULT_SEND_BOUND: SendBound = { maxBufferedBytes: DEFAULT_MAX_BUFFERED_BYTES, timeoutMs: DEFAULT_SEND_TIMEOUT_MS };

/**
 * Writes `chunk`; when the stream then holds more than the bound's bytes, waits until it drained, `signal`
 * aborted (client gone) or the timeout passed — then the connection is destroyed. Resolves false when the
 * stream is (now) closed, true when the caller may write on.
 */
export function writeBounded(res: Response, chunk: string, signal: AbortSignal, bound: SendBound): Promise<boolean> {
  if (signal.aborted || res.destroyed) return Promise.resolve(false);
  res.write(chunk);
  if (res.writableLength <= bound.maxBufferedBytes) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const finish = (open: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      signal.removeEventListener('abort', onAbort);
      resolve(open);
    };
    const onDrain = () => finish(true);
    const onAbort = () => finish(false);
    const timer = setTimeout(() => {
      res.destroy();
      finish(false);
    }, bound.timeoutMs);
    res.on('drain', onDrain);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Tracks how long a stream written without waiting (a fan-out subscriber) has been above the bound;
 * {@link check} destroys it once that exceeds the timeout. Returns whether the stream is still open.
 */
export class SendWatch {
  private since: number | null = null;
  constructor(
    private readonly res: Response,
    private readonly bound: SendBound,
  ) {}

  /** Checks the stream at `now` (ms); destroys it when it has been above the bound longer than the timeout. */
  check(now: number): boolean {
    if (this.res.destroyed) return false;
    if (this.res.writableLength <= this.bound.maxBufferedBytes) {
      this.since = null;
      return true;
    }
    this.since ??= now;
    if (now - this.since <= this.bound.timeoutMs) return true;
    this.res.destroy();
    return false;
  }
}
