/**
 * A small Server-Sent Events reader over `fetch` for the security tests: the events as they arrive (`id`,
 * `event`, `data`), and whether the server closed the stream.
 */

/** One SSE event as received. */
export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/** An open stream: events so far, `closed` once the server ended it, `next()` to wait for more. */
export interface SseStream {
  status: number;
  events: SseEvent[];
  closed: boolean;
  /** Resolves when `cond` holds for the events received (or the stream closed); bounded by the test timeout. */
  until(cond: (events: SseEvent[]) => boolean): Promise<void>;
  close(): void;
}

/** Opens `url` as an SSE stream with `headers`; resolves once the status line is in (events follow). */
export async function openSse(url: string, headers: Record<string, string>): Promise<SseStream> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const waiters = new Set<() => void>();
  const stream: SseStream = {
    status: res.status,
    events: [],
    closed: false,
    until(cond) {
      return new Promise((resolve) => {
        const check = () => {
          if (stream.closed || cond(stream.events)) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      });
    },
    close: () => ac.abort(),
  };
  const wake = () => [...waiters].forEach((w) => w());
  if (res.status !== 200 || !res.body) {
    stream.closed = true;
    await res.text().catch(() => undefined);
    return stream;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const ev: SseEvent = { event: 'message', data: '' };
          let hasData = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const [field, ...rest] = line.split(':');
            const value = rest.join(':').replace(/^ /, '');
            if (field === 'id') ev.id = value;
            else if (field === 'event') ev.event = value;
            else if (field === 'data') {
              ev.data += (hasData ? '\n' : '') + value;
              hasData = true;
            }
          }
          if (hasData) stream.events.push(ev);
        }
        wake();
      }
    } catch {
      // aborted by close()
    }
    stream.closed = true;
    wake();
  })();
  return stream;
}
