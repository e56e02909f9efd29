/**
 * The README's walkthroughs, run as a newcomer would paste them: every ```sh walkthrough block of README.md,
 * in order, against `pnpm start` with its demo data (fresh data directory; free ports put in place of the
 * default ports and `.data/` replaced by the run's data directory). A block must exit 0 and show what the
 * README says it shows. The shop walkthrough runs again after the stack restarted on the same data (the demo
 * must survive its second day), and fails when its order does not get through.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testTime } from '@sports-timing/shared/src/test-time';
import type { components } from '../services/timing/src/generated/openapi';
import { freePorts } from '@sports-timing/shared/src/testing';

const root = path.join(__dirname, '..');

/** The walkthrough blocks of the README, in order. */
function walkthroughBlocks(readme: string): string[] {
  return [...readme.matchAll(/```sh walkthrough\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/**
 * `fetch` on a connection of its own (`Connection: close`): the walkthrough blocks run with `spawnSync`, which
 * holds this process's event loop for as long as a block runs, so a pooled keep-alive connection that the
 * server closed meanwhile (or that belonged to the stack before a restart) is not yet known to be closed when
 * the next request would reuse it ("other side closed" on a busy machine).
 */
function fetchOnce(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), connection: 'close' } });
}

async function waitHealthy(url: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      if ((await fetchOnce(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} never became healthy`);
}

let stack: ChildProcess;
let stackExit: Promise<number | null>;
let dataDir: string;
let ports: Record<'ordering' | 'timing' | 'erp' | 'payment' | 'pg', number>;

/** Starts `pnpm start` on this run's ports and data directory and waits until both services are ready. */
async function startStack(): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    EMBEDDED_PG_PORT: String(ports.pg),
    ORDERING_PORT: String(ports.ordering),
    TIMING_PORT: String(ports.timing),
    ERP_SIMULATOR_PORT: String(ports.erp),
    PAYMENT_SIMULATOR_PORT: String(ports.payment),
    COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
  };
  delete env.DATABASE_URL;
  stack = spawn('pnpm', ['start'], { cwd: root, env, stdio: 'ignore' });
  stackExit = new Promise((resolve) => stack.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + testTime(120_000);
  await waitHealthy(`http://127.0.0.1:${ports.timing}/readyz`, deadline);
  await waitHealthy(`http://127.0.0.1:${ports.ordering}/readyz`, deadline);
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'readme-'));
  const [pg, ordering, timing, erp, payment] = await freePorts(5);
  ports = { pg, ordering, timing, erp, payment };
  await startStack();
}, testTime(150_000));

afterAll(async () => {
  stack?.kill('SIGTERM');
  await stackExit;
  rmSync(dataDir, { recursive: true, force: true });
});

/** The one block containing `marker` (a walkthrough found by its content, not its place in the README). */
function blockWith(blocks: string[], marker: string): string {
  const found = blocks.filter((b) => b.includes(marker));
  if (found.length !== 1) throw new Error(`${found.length} walkthrough blocks contain ${JSON.stringify(marker)}`);
  return found[0];
}

/** Runs one block as pasted into a shell (bash -e), on this run's ports and data directory (`DATA_DIR` set, as a newcomer who moved it). */
function runBlock(block: string): { status: number | null; output: string } {
  const script = block
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${ports.ordering}`)
    .replaceAll('127.0.0.1:8081', `127.0.0.1:${ports.timing}`)
    .replaceAll('127.0.0.1:8090', `127.0.0.1:${ports.erp}`)
    .replaceAll('127.0.0.1:8091', `127.0.0.1:${ports.payment}`)
    .replaceAll('.data/', `${dataDir}/`);
  // The port variables as a newcomer who moved the ports sets them, so the CLI (`pnpm punches`) finds the stack.
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, TIMING_PORT: String(ports.timing), ORDERING_PORT: String(ports.ordering) };
  delete env.TIMING_URL;
  delete env.ORDERING_URL;
  delete env.TIMING_API_KEY;
  const r = spawnSync('bash', ['-e', '-c', script], { cwd: root, env, encoding: 'utf8', timeout: testTime(90_000) });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('README walkthroughs', () => {
  const blocks = walkthroughBlocks(readFileSync(path.join(root, 'README.md'), 'utf8'));

  it('the README has the tour and the shop order walkthrough', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
  });

  it('the first tour: punches as MeOS and as Center clients read them, HEAD, articles, free numbers, battery, a token', () => {
    const { status, output } = runBlock(blocks[0]);
    expect(output).toMatch(/^id,card,time,code,type,modem,receptionTimeUtc$/m);
    expect(output).toMatch(/^x-total-count: 6759\r?$/im);
    expect(output).toMatch(/^id,modem,card,time,code,mode,receptionTime$/m);
    expect(output).toMatch(/"articleNumber":"SIAC1"/);
    expect(output).toMatch(/"cardNumber":"8621484","batteryDate":"2020-01-15","replaceBefore":"2023-01-15"/);
    expect(output).toMatch(/"access_token":"/);
    expect(status).toBe(0);
  });

  it('a shop order, paid through the simulator, reaches the ERP as a sales order', () => {
    const { status, output } = runBlock(blocks[1]);
    expect(output).toMatch(/"state":"pending_payment"/);
    expect(output).toMatch(/payment page answered 200/);
    expect(output).toMatch(/SO-\d{4}-\d{6}: transferred/);
    expect(output).toMatch(/"commission":"SO-\d{4}-\d{6}"/);
    expect(status).toBe(0);
  });

  describe('your own event', () => {
    it("the admin creates the club's user and its key; the club makes a second key", () => {
      const { status, output } = runBlock(blockWith(blocks, '"userName": "ok-lagune"'));
      expect(output).toMatch(/^club key saved$/m);
      expect(output).toMatch(/"name":"MeOS"/);
      expect(status).toBe(0);
    });

    it('the club creates its event with numeric modems, uploads one punch and replays the fixture: all 476 in the event', () => {
      const { status, output } = runBlock(blockWith(blocks, '--list-modems'));
      expect(output).toMatch(/^modems: \["3000001","3000002","3000053",/m);
      expect(output).toMatch(/"received":1,"stored":1,"duplicates":0/);
      expect(output).toMatch(/^sent 475, stored 475, duplicates 0, rejected 0$/m);
      expect(output).toMatch(/^id,card,time,code,type,modem,receptionTimeUtc$/m);
      expect(output).toMatch(/^476 punches in event \d+$/m);
      expect(output).toMatch(/^\d+\t\d+\t2020-02-01 \d\d:\d\d:\d\d\.000\t\d+\t\w+\t3000\d{3}$/m);
      expect(status).toBe(0);
    });

    it("MeOS (event and modem mode), SIRAPimport and RadioSender requests answer the club's punches", () => {
      const { status, output } = runBlock(blockWith(blocks, 'MeOS, event mode: its exact query'));
      expect(output).toMatch(/^\d+,\d+,158058\d{7},\d+,\w+,3000\d{3},\d+$/m);
      expect(output).toMatch(/^modems 3000053,3000054: 17 punches$/m);
      expect(output).toMatch(/^id,modem,card,time,code,mode,receptionTime$/m);
      expect(status).toBe(0);
    });

    it("the live page and its status read of the club's event", () => {
      const { status, output } = runBlock(blockWith(blocks, '/events/$EVENT/live'));
      expect(output).toMatch(/<title>[^<]+<\/title>/);
      expect(output).toMatch(/"total":476/);
      expect(status).toBe(0);
    });

    it('a discount code, an order with it, its payment and its hand-off to the ERP', () => {
      const { status, output } = runBlock(blockWith(blocks, 'LAGUNE10'));
      expect(output).toMatch(/"codes":\["LAGUNE10"\]/);
      expect(output).toMatch(/"isValid":true/);
      expect(output).toMatch(/"discountCents":[1-9]\d*/);
      expect(output).toMatch(/payment page answered 200/);
      expect(output).toMatch(/SO-\d{4}-\d{6}: transferred/);
      expect(output).toMatch(/"commission":"SO-\d{4}-\d{6}"/);
      expect(status).toBe(0);
    });
  });

  describe('a copy before day 2', () => {
    it(
      'backed up while running, restored onto the stopped server: the event as at the backup, re-sent punches stored once, ids continue',
      async () => {
        const backedUp = runBlock(blockWith(blocks, 'pnpm -s backup'));
        expect(backedUp.output).toMatch(/^\[backup\] pg: copied while running/m);
        expect(backedUp.status).toBe(0);
        // A punch stored after the backup, read by a poller: it is not in the copy, and no new punch may take its id.
        const key = readFileSync(path.join(dataDir, 'club-key'), 'utf8').trim();
        const timing = `http://127.0.0.1:${ports.timing}/api/rest/v1/punches`;
        const late = [{ card: '8000099', time: 1580583900000, code: 53, type: 'Control', modem: '3000053' }];
        const stored = await fetchOnce(timing, { method: 'POST', headers: { apikey: key, 'Content-Type': 'application/json' }, body: JSON.stringify(late) });
        expect(stored.status).toBe(200);
        const seen = (await (
          await fetchOnce(`${timing}?user=ok-lagune&afterId=0&modem=3000053`, { headers: { apikey: key } })
        ).json()) as components['schemas']['Punch'][];
        const lastSeen = Math.max(...seen.map((p) => p.id));

        stack.kill('SIGTERM');
        await stackExit;
        const restored = runBlock(blockWith(blocks, 'pnpm -s restore'));
        expect(restored.output).toMatch(/^\[restore\] pg: restored from the backup of /m);
        expect(restored.status).toBe(0);
        await startStack();

        const after = runBlock(blockWith(blocks, 'after the restore'));
        expect(after.output).toMatch(/^476 punches in event \d+ after the restore$/m);
        expect(after.output).toMatch(/^sent 475, stored 0, duplicates 475, rejected 0$/m);
        expect(after.status).toBe(0);
        const again = await fetchOnce(timing, { method: 'POST', headers: { apikey: key, 'Content-Type': 'application/json' }, body: JSON.stringify(late) });
        expect(((await again.json()) as components['schemas']['UploadResult']).stored).toBe(1);
        const now = (await (
          await fetchOnce(`${timing}?user=ok-lagune&afterId=${lastSeen}`, { headers: { apikey: key } })
        ).json()) as components['schemas']['Punch'][];
        expect(now.map((p) => p.card)).toEqual(['8000099']);
      },
      testTime(300_000),
    );
  });

  it('negative control: the shop walkthrough fails when its order is not paid', () => {
    // The payment step left out: the order stays pending_payment.
    const unpaid = blocks[1].replace(/^curl[^\n]*action=pay[^\n]*$/m, 'true').replace('seq 1 30', 'seq 1 2');
    expect(unpaid).not.toMatch(/action=pay/);
    const { status, output } = runBlock(unpaid);
    expect(output).toMatch(/not transferred/);
    expect(status).not.toBe(0);
  });

  it(
    'after a restart on the same data, the shop walkthrough works again (new paylink ids, a second sales order)',
    async () => {
      stack.kill('SIGTERM');
      await stackExit;
      await startStack();
      const { status, output } = runBlock(blocks[1]);
      expect(output).toMatch(/SO-\d{4}-\d{6}: transferred/);
      expect(status).toBe(0);
    },
    testTime(200_000),
  );
});
