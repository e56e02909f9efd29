/**
 * Shared punch streams (docs/architecture.md "Stream fan-out"): every anonymous stream of the same filter (a
 * public event, a public event's modems) follows one **feed**. After each wake-up of the hub the feed reads
 * once from its own position (the normal gap-free read, so the polling guarantee is unchanged), serializes each
 * punch once into its SSE message and writes the same text to every subscriber. A thousand spectators of one
 * event therefore cost one read and one serialization per change, plus the bytes.
 *
 * A new subscriber first replays its own backlog (its first read, then pages through the instance's
 * {@link BacklogGate}) until it has reached the feed's position, then joins in the same tick, so the feed's next
 * batch starts exactly after what it has: no gap, no repeat (a subscriber that read past the feed gets only the
 * part of a batch after its own position). Slow readers are bounded by {@link SendBound} (send-bound.ts): a
 * subscriber above the bound longer than the timeout is closed and resumes with `Last-Event-ID`.
 *
 * Access: a feed reads as the anonymous caller, so each read re-checks that the filter is still public; a read
 * error (the event went private or away) ends every stream of the feed, and their reconnects get the answer.
 */
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { BacklogGate } from '../punches/backlog-gate';
import type { PunchReadResult } from '../punches/punches.service';
import type { LiveHub } from './hub';
import { SendWatch, writeBounded, type SendBound } from './send-bound';

/** A JSON read of the filter from an `afterId` (exclusive). */
type ReadFrom = (afterId: number) => Promise<PunchReadResult>;

/** The SSE messages of a page: each punch's `id:`/`event: punch`/`data:` text, serialized once, and all joined. */
interface Messages {
  ids: number[];
  texts: string[];
  joined: string;
}

/** SSE messages of a JSON page body (the API `Punch` array, ascending id). */
function sseMessages(body: string | Buffer): Messages {
  const punches = JSON.parse(body.toString()) as { id: number }[];
  const ids: number[] = [];
  const texts: string[] = [];
  for (const p of punches) {
    ids.push(p.id);
    texts.push(`id: ${p.id}\nevent: punch\ndata: ${JSON.stringify(p)}\n\n`);
  }
  return { ids, texts, joined: texts.join('') };
}

/** The messages of `m` for punches after `position`. */
function after(m: Messages, position: number): string {
  if (m.ids.length === 0 || position >= m.ids[m.ids.length - 1]) return '';
  if (position < m.ids[0]) return m.joined;
  const from = m.ids.findIndex((id) => id > position);
  return m.texts.slice(from).join('');
}

interface Subscriber {
  res: Response;
  /** Highest punch id written to it. */
  position: number;
  watch: SendWatch;
  /** Leaves the feed and ends the subscriber's {@link StreamFanout.follow}. */
  end: () => void;
}

interface Feed {
  key: string;
  read: ReadFrom;
  /** Highest punch id the feed has broadcast (or the first subscriber had when it made the feed). */
  position: number;
  subscribers: Set<Subscriber>;
}

/** Options of {@link StreamFanout}. */
export interface FanoutOptions {
  hub: LiveHub;
  backlog: BacklogGate;
  bound: SendBound;
  /** Interval of `: keep-alive` comments (ms). */
  heartbeatMs: number;
  logger?: Logger;
}

/**
 * Shortest time from one read of a feed to its next, in ms (docs/architecture.md "Stream fan-out"): each
 * broadcast is a write to every subscriber (and, behind a proxy, a read and a write there too), so a mass start of
 * hundreds of punches a second is sent to a thousand spectators as ten batches a second, not one per upload. A
 * punch after a quiet moment is read at once. @internal
 */
export const FEED_READ_INTERVAL_MS = 100;

/** What a subscriber brings: its filter's key and read, where it starts and its first read (see live.service.ts). */
export interface FollowOptions {
  /** The filter as a key: streams with equal keys read the same punches. */
  key: string;
  read: ReadFrom;
  afterId: number;
  /** The first read (from `afterId`) and the hub generation taken before it. */
  first: PunchReadResult;
  seen: number;
  signal: AbortSignal;
}

/** The feeds of one app instance (see the module comment); build one per app with the app's hub. */
export class StreamFanout {
  private readonly feeds = new Map<string, Feed>();
  private heartbeat: NodeJS.Timeout | null = null;
  private sweep: NodeJS.Timeout | null = null;
  /** Database reads made by feeds and batches they broadcast. */
  readonly stats = { reads: 0, batches: 0 };

  constructor(private readonly opts: FanoutOptions) {}

  /** Feeds running now (one per followed filter). */
  get feedCount(): number {
    return this.feeds.size;
  }

  /**
   * Runs a shared stream on `res` (headers sent): the subscriber's backlog, then the feed of `o.key`. Resolves
   * when the stream is over (client gone, send timeout, hub closing, a read failed); the caller ends `res`.
   * Read errors of the backlog are thrown.
   */
  async follow(res: Response, o: FollowOptions): Promise<void> {
    const { hub, backlog, bound } = this.opts;
    let position = o.afterId;
    let page = o.first;
    let generation = o.seen;
    for (;;) {
      const m = sseMessages(page.body);
      if (m.ids.length > 0) {
        if (!(await writeBounded(res, m.joined, o.signal, bound))) return;
        position = m.ids[m.ids.length - 1];
      }
      if (o.signal.aborted || hub.isClosing) return;
      const full = page.total > m.ids.length;
      const feed = this.feeds.get(o.key);
      if (!full && (feed === undefined || feed.position <= position)) break;
      // Behind the feed but nothing readable yet: wait for the punch to become visible rather than spin.
      if (m.ids.length === 0) {
        const reason = await hub.wait(generation, hub.safetyPollMs, o.signal);
        if (reason === 'aborted' || reason === 'closing') return;
      }
      generation = hub.current;
      page = await backlog.page(() => o.read(position));
    }
    // Caught up with the feed (or there is none): join in this tick, so its next batch starts after `position`.
    await new Promise<void>((resolve) => {
      const existing = this.feeds.get(o.key);
      const f = existing ?? { key: o.key, read: o.read, position, subscribers: new Set<Subscriber>() };
      const sub: Subscriber = {
        res,
        position,
        watch: new SendWatch(res, bound),
        end: () => {
          f.subscribers.delete(sub);
          o.signal.removeEventListener('abort', sub.end);
          resolve();
        },
      };
      o.signal.addEventListener('abort', sub.end, { once: true });
      f.subscribers.add(sub);
      // A new feed starts with its first subscriber in it (the loop ends when it finds none).
      if (existing === undefined) {
        this.feeds.set(o.key, f);
        void this.run(f, generation);
      }
      this.startTimers();
    });
  }

  /** The feed's loop: one read per wake-up from its position (at most one per FEED_READ_INTERVAL_MS), broadcast; ends with its last subscriber. */
  private async run(feed: Feed, seen: number): Promise<void> {
    const { hub, backlog } = this.opts;
    let generation = seen;
    let lastRead = -Infinity;
    try {
      for (;;) {
        if (feed.subscribers.size === 0) return;
        const reason = await hub.wait(generation, hub.safetyPollMs);
        if (reason === 'closing' || feed.subscribers.size === 0) return;
        const rest = lastRead + FEED_READ_INTERVAL_MS - performance.now();
        // Unreferenced: the pause never keeps a stopping process alive.
        if (rest > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(rest)).unref());
        if (hub.isClosing || feed.subscribers.size === 0) return;
        // Taken after the pause: the read covers every wake-up during it.
        generation = hub.current;
        lastRead = performance.now();
        this.stats.reads += 1;
        let page = await feed.read(feed.position);
        for (;;) {
          const m = sseMessages(page.body);
          if (m.ids.length === 0) break;
          this.broadcast(feed, m);
          feed.position = m.ids[m.ids.length - 1];
          // A burst of more than a page: the rest at once, paced as a backlog.
          if (page.total <= m.ids.length || feed.subscribers.size === 0) break;
          this.stats.reads += 1;
          page = await backlog.page(() => feed.read(feed.position));
        }
      }
    } catch (err) {
      this.opts.logger?.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'punch stream feed ended by an error');
    } finally {
      if (this.feeds.get(feed.key) === feed) this.feeds.delete(feed.key);
      for (const sub of [...feed.subscribers]) sub.end();
    }
  }

  /** Writes a batch to every subscriber of `feed` (the part after its own position), without waiting. */
  private broadcast(feed: Feed, m: Messages): void {
    this.stats.batches += 1;
    const last = m.ids[m.ids.length - 1];
    for (const sub of [...feed.subscribers]) {
      if (sub.res.destroyed) {
        sub.end();
        continue;
      }
      const chunk = sub.position < m.ids[0] ? m.joined : after(m, sub.position);
      if (chunk !== '') sub.res.write(chunk);
      sub.position = Math.max(sub.position, last);
    }
  }

  /** Every subscriber of every feed. */
  private *subscribers(): Generator<Subscriber> {
    for (const feed of this.feeds.values()) yield* feed.subscribers;
  }

  /** Keep-alive comments and the send-timeout sweep, while there are feeds. */
  private startTimers(): void {
    if (this.heartbeat === null) {
      this.heartbeat = setInterval(() => {
        for (const sub of this.subscribers()) if (!sub.res.destroyed) sub.res.write(': keep-alive\n\n');
        if (this.feeds.size === 0) this.stopTimers();
      }, this.opts.heartbeatMs);
      this.heartbeat.unref();
    }
    if (this.sweep === null) {
      this.sweep = setInterval(
        () => {
          const now = Date.now();
          for (const sub of this.subscribers()) if (!sub.watch.check(now)) sub.end();
          if (this.feeds.size === 0) this.stopTimers();
        },
        Math.max(10, Math.min(1000, this.opts.bound.timeoutMs / 4)),
      );
      this.sweep.unref();
    }
  }

  private stopTimers(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.sweep) clearInterval(this.sweep);
    this.heartbeat = null;
    this.sweep = null;
  }
}
