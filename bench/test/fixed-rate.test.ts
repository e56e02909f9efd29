/**
 * The open-loop generator of the fixed-rate scenarios (load-worker.ts `runFixedRate`): it keeps the rate,
 * and a server stall is charged to every request that came due during it, not only to the one that was
 * being served (no coordinated omission). The server runs in a child process so that its stall does not
 * also stall the generator.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { runFixedRate } from '../src/fixed-rate';

// Answers at once; `GET /stall` first blocks the event loop for 300 ms. Prints its port.
const SERVER = `
const http = require('node:http');
let stalled = false;
http.createServer((req, res) => {
  if (req.url === '/stall' && !stalled && Date.now() >= Number(process.env.STALL_AT)) {
    stalled = true;
    const until = Date.now() + 300;
    while (Date.now() < until);
  }
  res.setHeader('content-type', 'text/plain');
  res.end('ok');
}).listen(0, '127.0.0.1', function () { process.stdout.write(this.address().port + '\\n'); });
`;

async function startServer(stallAt: number): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['-e', SERVER], { env: { ...process.env, STALL_AT: String(stallAt) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  return { child, url: `http://127.0.0.1:${chunk.toString().trim()}` };
}

describe('fixed-rate load (open loop)', () => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((c) => c.kill()));

  it('sends at the given rate and measures from each request’s due time', async () => {
    const { child, url } = await startServer(Number.MAX_SAFE_INTEGER);
    children.push(child);
    const r = await runFixedRate({ url: `${url}/`, method: 'GET', headers: {}, connections: 8, durationSeconds: 1 }, 400);
    expect(r.requests).toBe(400);
    expect(r.non2xx + r.errors + r.timeouts).toBe(0);
    // Never faster than asked (how close it gets on a busy machine is the machine's business).
    expect(r.rps).toBeLessThanOrEqual(400);
    expect(r.p50).toBeGreaterThan(0);
    expect(r.bytesPerRequest).toBeGreaterThan(2);
  });

  it('charges a 300 ms stall to every request that came due during it', async () => {
    // The stall starts 400 ms into a 1.5 s run at 200 req/s: ≈60 requests come due while the server is
    // blocked, with waits spread over 0–300 ms. A closed-loop count would charge the stall to ≤ 8 requests
    // (one per connection), leaving p90 near the normal latency.
    const { child, url } = await startServer(Date.now() + 1_000);
    children.push(child);
    await new Promise((r) => setTimeout(r, 600));
    const r = await runFixedRate({ url: `${url}/stall`, method: 'GET', headers: {}, connections: 8, durationSeconds: 1.5 }, 200);
    expect(r.requests).toBe(300);
    expect(r.non2xx + r.errors + r.timeouts).toBe(0);
    expect(r.max).toBeGreaterThanOrEqual(290);
    // Far more than the ≤ 8 requests a closed loop would charge: at least a tenth of all came due in the stall.
    expect(r.p90).toBeGreaterThan(100);
  });
});
