/**
 * The Server-Sent Events reader of the typed client, apart from the Node-only helpers of index.ts so that a
 * browser bundle (the timing service's console and live page) can use it: only WHATWG streams and TextDecoder.
 */

/**
 * Parses a Server-Sent Events byte stream (WHATWG rules: `field: value` lines, a blank line dispatches,
 * `:` comments) and calls `onEvent` per event, `onComment` per comment. Resolves at the end of the stream or
 * as soon as `signal` aborts.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (e: { id?: string; event: string; data: string }) => unknown,
  onComment?: (text: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | undefined;
  let event = '';
  let data: string[] = [];
  const reader = body.getReader();
  // The fetch's own abort does not always reach a body read that is already waiting (seen on Node 20: a tail
  // kept running after SIGTERM); cancelling the reader ends the read at once.
  const onAbort = () => void reader.cancel().catch(() => undefined);
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\n|\r/)) >= 0) {
        // A CR at the end of a chunk may be the first half of CRLF: decide with the next chunk.
        if (buffer[nl] === '\r' && nl === buffer.length - 1) break;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) await onEvent({ id, event: event || 'message', data: data.join('\n') });
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) {
          onComment?.(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') id = value;
        else if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}
