/**
 * Handlers of the event operations (events.service.ts holds the rules).
 */
import type { Handlers } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';
import * as events from '../events/events.service';
import type { HandlerDeps } from './deps';
import { callerOf, requireCaller, sendCreated, sendNoContent } from './respond';

/** `createEvent`, `listEvents`, `getEvent`, `putEvent`, `deleteEvent`. */
export function eventHandlers(deps: HandlerDeps): Handlers<operations> {
  const { db } = deps.database;
  return {
    async createEvent(req, res) {
      const ev = await events.createEvent(db, requireCaller(res), req.body);
      sendCreated(res, events.eventLocation(ev.id), ev);
    },
    async listEvents(_req, res) {
      res.json(await events.listEvents(db, callerOf(res)));
    },
    async getEvent(req, res) {
      res.json(await events.getEvent(db, callerOf(res), req.params.id));
    },
    async putEvent(req, res) {
      res.json(await events.replaceEvent(db, requireCaller(res), req.params.id, req.body));
    },
    async deleteEvent(req, res) {
      await events.deleteEvent(db, requireCaller(res), req.params.id);
      sendNoContent(res);
    },
  };
}
