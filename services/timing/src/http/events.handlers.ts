/**
 * Handlers of the event operations (events.service.ts holds the rules).
 */
import { specFilled, type Handlers } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';
import * as events from '../events/events.service';
import { getEventStatus } from '../events/event-status.service';
import type { HandlerDeps } from './deps';
import { callerOf, requireCaller, sendCreated, sendNoContent } from './respond';

/** `createEvent`, `listEvents`, `getEvent`, `getEventStatus`, `putEvent`, `deleteEvent`. */
export function eventHandlers(deps: HandlerDeps): Handlers<operations> {
  const { db } = deps.database;
  return {
    async createEvent(req, res) {
      const ev = await events.createEvent(deps.events, requireCaller(res), req.body, deps.quotas.eventsPerUser);
      sendCreated(res, events.eventLocation(ev.id), ev);
    },
    async listEvents(req, res) {
      const page = await events.listEvents(db, callerOf(res), { afterId: req.query.afterId, limit: specFilled(req.query.limit, 'listEvents limit') });
      res.setHeader('X-Total-Count', String(page.total));
      res.json(page.events);
    },
    async getEvent(req, res) {
      res.json(await events.getEvent(db, callerOf(res), req.params.id));
    },
    async getEventStatus(req, res) {
      // The page polls this while it is open: never cached by a browser or proxy.
      res.setHeader('Cache-Control', 'no-store');
      res.json(await getEventStatus(deps.database, callerOf(res), req.params.id, specFilled(req.query.recent, 'getEventStatus recent')));
    },
    async putEvent(req, res) {
      res.json(await events.replaceEvent(deps.events, requireCaller(res), req.params.id, req.body));
    },
    async deleteEvent(req, res) {
      await events.deleteEvent(deps.events, requireCaller(res), req.params.id);
      sendNoContent(res);
    },
  };
}
