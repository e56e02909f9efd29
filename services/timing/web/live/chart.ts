/**
 * The live view's chart: punches per minute, one line per control code (uPlot, bundled from its npm package).
 */
import uPlot from 'uplot';

const PALETTE = ['#0b5cad', '#c0392b', '#1f7a3a', '#8e44ad', '#d35400', '#16a085', '#2c3e50', '#b7950b', '#7f8c8d', '#e84393'];
const HEIGHT = 300;

/** Punches per minute (local wall-clock minute start, ms as if UTC) and control code. */
export type PerMinute = Map<number, Map<number, number>>;

/** Adds `n` punches of `code` to `minute`. */
export function bump(map: PerMinute, minute: number, code: number, n: number): void {
  let codes = map.get(minute);
  if (!codes) {
    codes = new Map();
    map.set(minute, codes);
  }
  codes.set(code, (codes.get(code) ?? 0) + n);
}

interface ChartData {
  codes: number[];
  data: uPlot.AlignedData;
  range: [number, number] | null;
}

/**
 * Every minute from the first to the last (a minute without punches of a control is 0, so a quiet hour is a
 * flat line, not a slope), one series per code; and the range that holds the middle of the punches (2 % cut
 * at the start, 0.5 % at the end), so that a few stray times (result-list artefacts at 00:00) do not squeeze
 * the race into a corner.
 */
function chartData(perMinute: PerMinute): ChartData {
  const keys = [...perMinute.keys()].sort((a, b) => a - b);
  const codes = new Set<number>();
  let total = 0;
  for (const byCode of perMinute.values())
    for (const [code, n] of byCode) {
      codes.add(code);
      total += n;
    }
  const codeList = [...codes].sort((a, b) => a - b);
  const minutes: number[] = [];
  if (keys.length) for (let m = keys[0]; m <= keys[keys.length - 1]; m += 60_000) minutes.push(m);
  const data: uPlot.AlignedData = [minutes.map((x) => x / 1000), ...codeList.map((code) => minutes.map((x) => perMinute.get(x)?.get(code) ?? 0))];
  let seen = 0;
  let lo = keys[0];
  let hi = keys[keys.length - 1];
  let loFound = false;
  for (const k of keys) {
    for (const v of perMinute.get(k)!.values()) seen += v;
    if (!loFound && seen >= total * 0.02) {
      lo = k;
      loFound = true;
    }
    if (seen <= total * 0.995) hi = k;
  }
  return { codes: codeList, data, range: keys.length ? [lo / 1000 - 300, hi / 1000 + 300] : null };
}

/** The chart in one element; drag to zoom, double-click to see everything. */
export class PunchChart {
  private plot: uPlot | null = null;

  constructor(private readonly el: HTMLElement) {}

  /** Draws `perMinute`; a live update (`rebuild` false, same codes) keeps the zoom the organiser chose. */
  render(perMinute: PerMinute, rebuild: boolean): void {
    const d = chartData(perMinute);
    if (!rebuild && this.plot && this.plot.series.length === d.codes.length + 1) {
      this.plot.setData(d.data, false);
      return;
    }
    this.plot?.destroy();
    this.plot = new uPlot(
      {
        width: this.width(),
        height: HEIGHT,
        // The API's `time` is local wall clock written as if UTC: show it as such.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        series: [
          { label: 'Minute' },
          ...d.codes.map((code, i) => ({ label: `Code ${code}`, stroke: PALETTE[i % PALETTE.length], width: 1.5, points: { show: false } })),
        ],
        axes: [{}, { label: 'Punches / min' }],
        legend: { live: false },
      },
      d.data,
      this.el,
    );
    if (d.range) this.plot.setScale('x', { min: d.range[0], max: d.range[1] });
  }

  /** Follows the element's width (window resize). */
  resize(): void {
    this.plot?.setSize({ width: this.width(), height: HEIGHT });
  }

  /** Removes the chart. */
  destroy(): void {
    this.plot?.destroy();
    this.plot = null;
  }

  private width(): number {
    return Math.max(280, this.el.clientWidth || 600);
  }
}
