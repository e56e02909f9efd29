/**
 * Webhook sending of both simulators (`packages/erp-simulator`, `packages/payment-simulator`): one POST per
 * attempt with its outcome, and the URL form their logs print. Test and development tooling only, like
 * `sim-server.ts`.
 */

/** Sends one webhook (JSON or form body) and reports the outcome; never throws. */
export async function postWebhook(url: string, body: string, contentType: string, timeoutMs: number): Promise<{ status: number | null; error: string | null }> {
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body, signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return { status: res.status, error: null };
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string } };
    return { status: null, error: e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? 'connection failed') };
  }
}

/** A URL without its query string (webhook URLs carry secrets in the query). */
export function withoutQuery(url: string): string {
  const i = url.indexOf('?');
  return i < 0 ? url : `${url.slice(0, i)}?…`;
}
