/**
 * What the live view holds of its event between renders (live/view.ts fills it, live/tables.ts draws it).
 */
import type { components } from '@sports-timing/contracts/src/generated/timing';
import type { PerMinute } from './chart';

type Punch = components['schemas']['Punch'];
type ModemStatus = components['schemas']['ModemStatus'];
type Event = components['schemas']['Event'];

/** How many of the newest punches the feed shows. */
export const FEED_ROWS = 50;

/** What the view holds of the event between renders. */
export interface LiveState {
  event: Event;
  total: number;
  lastId: number;
  modems: Map<string, ModemStatus>;
  /** Reception times (UTC ms) of the last minute, among the punches the view has seen. */
  recentUploads: number[];
  /** The rest of the service's `lastMinute` count at `lastMinuteAt` (a busy minute holds more than `recent`). */
  lastMinuteBase: number;
  lastMinuteAt: number;
  perMinute: PerMinute;
  feed: Punch[];
}
