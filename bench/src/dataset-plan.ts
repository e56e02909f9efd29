/**
 * The layout of the benchmark dataset for a scale (dataset.ts describes it): how many punches each event gets,
 * on which day and which modems. Pure; the generator turns it into rows.
 */

/** Dataset variants: `full` as described above; `bigOnly` holds only the big event (flatness baseline). */
export type DatasetVariant = 'full' | 'bigOnly';

/** One event: its number, punches, day (0 = first) and its block of modems (first serial number, count). */
interface EventPlan {
  e: number;
  n: number;
  day: number;
  modemFirst: number;
  modemCount: number;
}

/** The whole layout: total punches, modems and the events, the big one first, the small one second. */
interface Plan {
  totalPunches: number;
  modems: number;
  events: EventPlan[];
}

const BIG_EVENT_MODEMS = 60;
const SMALL_EVENT_MODEMS = 4;
/** Other events held on the big event's day (their punches interleave with the big event's). */
const SAME_DAY_EVENTS = 20;

/** Event and modem layout for a scale (pure; see the module comment). */
export function planDataset(scale: number, variant: DatasetVariant): Plan {
  const big = Math.max(100, Math.round(1_000_000 * scale));
  if (variant === 'bigOnly') {
    return { totalPunches: big, modems: BIG_EVENT_MODEMS, events: [{ e: 1, n: big, day: 0, modemFirst: 1, modemCount: BIG_EVENT_MODEMS }] };
  }
  const total = Math.max(big * 2, Math.round(5_000_000 * scale));
  const small = Math.min(400, Math.max(10, Math.round(total / 100)));
  const eventCount = Math.max(4, Math.round(1000 * scale));
  const fixedModems = BIG_EVENT_MODEMS + SMALL_EVENT_MODEMS;
  const modems = Math.max(fixedModems + (eventCount - 2), Math.round(3000 * scale));
  const others = eventCount - 2;
  const rest = total - big - small;
  const weights = Array.from({ length: others }, (_, k) => 1 + ((k * 7919) % 9));
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(1, Math.floor((rest * w) / weightSum)));
  sizes[others - 1] += rest - sizes.reduce((a, b) => a + b, 0);
  const lastDay = others; // earlier events on days 0…others-1, the big day after them
  const events: EventPlan[] = [
    { e: 1, n: big, day: lastDay, modemFirst: 1, modemCount: BIG_EVENT_MODEMS },
    { e: 2, n: small, day: Math.max(0, lastDay - SAME_DAY_EVENTS - 1), modemFirst: BIG_EVENT_MODEMS + 1, modemCount: SMALL_EVENT_MODEMS },
  ];
  const perEvent = Math.floor((modems - fixedModems) / others);
  const extra = (modems - fixedModems) % others;
  let next = fixedModems + 1;
  for (let k = 0; k < others; k++) {
    const count = perEvent + (k < extra ? 1 : 0);
    const day = k >= others - SAME_DAY_EVENTS ? lastDay : k;
    events.push({ e: k + 3, n: sizes[k], day, modemFirst: next, modemCount: count });
    next += count;
  }
  return { totalPunches: total, modems, events };
}
