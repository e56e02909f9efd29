/**
 * `TIMING_READ_DATABASE_URL` against a real streaming replica (`pg_basebackup -R` of a private primary), the
 * compiled timing service behind HAProxy: with WAL replay paused on the standby, a whole download (no
 * `afterId`) answers the standby's older state, while a poll with `afterId`, a long-poll and a stream answer
 * the primary's; after replay resumes both agree; with the standby stopped, whole downloads fall back to the
 * primary. Needs HAProxy like topology.test.ts (skipped locally without it, failing in CI).
 */
import { existsSync } from 'node:fs';
import { readEventStream } from '../../packages/timing-client/src';
import { HAPROXY_BIN } from './haproxy';
import { startTopology, type Topology } from './topology';
import { testNote } from '@sports-timing/shared/src/testing';
import { testTime } from '@sports-timing/shared/src/test-time';

jest.setTimeout(testTime(90_000));

// Uses base + 0, 1, 2, 7 and 10 only: beside topology.test.ts (9560…) and `pnpm topology` (9510…) without overlap.
const BASE_PORT = 9540;
const haveHaproxy = existsSync(HAPROXY_BIN);

if (!haveHaproxy && process.env.CI === 'true') {
  test('HAProxy is installed (CI)', () => {
    throw new Error(`${HAPROXY_BIN} is missing: apt-get install -y haproxy (.ci/run does this)`);
  });
}
if (!haveHaproxy && process.env.CI !== 'true') {
  testNote(`read-replica tests skipped: ${HAPROXY_BIN} is missing (apt-get install -y haproxy)`);
}

type Punch = { id: number; card: string };

(haveHaproxy ? describe : describe.skip)('timing reads from a streaming replica (TIMING_READ_DATABASE_URL)', () => {
  let t: Topology;
  const modem = 'REPLICA-1';
  beforeAll(async () => {
    t = await startTopology({ basePort: BASE_PORT, timing: 1, ordering: 0, replica: true, readFromReplica: true });
  }, testTime(80_000));
  afterAll(async () => {
    await t?.stop();
  });

  const upload = async (card: string) => {
    const res = await fetch(`${t.timingUrl}/api/rest/v1/punches`, {
      method: 'POST',
      headers: { apikey: t.timingAdminKey, 'content-type': 'application/json' },
      body: JSON.stringify([{ card, time: 1_700_000_000_000 + Number(card), code: 31, type: 'Control', modem }]),
    });
    expect(res.status).toBe(200);
  };
  const read = async (query: string): Promise<string[]> => {
    const res = await fetch(`${t.timingUrl}/api/rest/v1/punches?modem=${modem}${query}`, { headers: { apikey: t.timingAdminKey } });
    expect(res.status).toBe(200);
    return ((await res.json()) as Punch[]).map((p) => p.card);
  };
  const onStandby = async (card: string) => {
    for (let i = 0; i < 200; i++) {
      const { rows } = await t.replica!.pool.query('select 1 from timing.punches where modem = $1 and card = $2', [modem, card]);
      if (rows.length) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`punch ${card} never reached the standby`);
  };

  test('whole downloads come from the standby, polls with afterId, long-polls and streams from the primary', async () => {
    await upload('1');
    await onStandby('1');
    const firstId = ((await (await fetch(`${t.timingUrl}/api/rest/v1/punches?modem=${modem}`, { headers: { apikey: t.timingAdminKey } })).json()) as Punch[])[0]
      .id;

    await t.replica!.pool.query('select pg_wal_replay_pause()');
    try {
      await upload('2');
      // The standby has not replayed punch 2: a whole download shows only punch 1 ...
      expect(await read('')).toEqual(['1']);
      // ... while the poll that follows it (afterId) reads the primary and gets punch 2: nothing is skipped.
      expect(await read(`&afterId=${firstId}`)).toEqual(['2']);
      // A long-poll (wait) from the start reads the primary.
      expect(await read('&wait=2')).toEqual(['1', '2']);
      // So does a stream.
      const abort = new AbortController();
      const res = await fetch(`${t.timingUrl}/api/rest/v1/punches/stream?modem=${modem}`, { headers: { apikey: t.timingAdminKey }, signal: abort.signal });
      const cards: string[] = [];
      await readEventStream(
        res.body!,
        (e) => {
          if (e.event !== 'punch') return;
          cards.push((JSON.parse(e.data) as Punch).card);
          if (cards.length === 2) abort.abort();
        },
        undefined,
        abort.signal,
      ).catch(() => undefined);
      expect(cards).toEqual(['1', '2']);
    } finally {
      await t.replica!.pool.query('select pg_wal_replay_resume()');
    }
    await onStandby('2');
    expect(await read('')).toEqual(['1', '2']);
  });

  test('with the standby stopped, whole downloads are answered by the primary', async () => {
    await t.replica!.close();
    t.stopReplica();
    await upload('3');
    expect(await read('')).toEqual(['1', '2', '3']);
  });
});
