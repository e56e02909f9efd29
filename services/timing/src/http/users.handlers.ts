/**
 * Handlers of users, keys and modems (users.service.ts, modems.service.ts hold the rules).
 */
import type { Handlers } from '@sports-timing/shared';
import type { operations } from '../generated/openapi';
import { listModems, releaseModem } from '../modems/modems.service';
import * as users from '../users/users.service';
import type { HandlerDeps } from './deps';
import { requireCaller, sendCreated, sendNoContent } from './respond';

/** `createUser`, `listUsers`, `getUser`, `createKey`, `listKeys`, `getKey`, `deleteKey`, `getCaller`, `listModems`, `deleteModem`. */
export function userHandlers(deps: HandlerDeps): Handlers<operations> {
  const { db } = deps.database;
  return {
    async createUser(req, res) {
      const created = await users.createUserWithKey(db, { userName: req.body.userName, role: req.body.role, keyName: req.body.keyName });
      sendCreated(res, `/api/rest/v1/users/${created.user.id}`, created);
    },
    async listUsers(_req, res) {
      res.json(await users.listUsers(db));
    },
    async getUser(req, res) {
      res.json(await users.getUser(db, req.params.id));
    },
    async createKey(req, res) {
      const key = await users.createKey(db, requireCaller(res), req.body.name, deps.quotas.keysPerUser);
      sendCreated(res, `/api/rest/v1/keys/${key.id}`, key);
    },
    async listKeys(_req, res) {
      res.json(await users.listKeys(db, requireCaller(res)));
    },
    async getKey(req, res) {
      res.json(await users.getKey(db, requireCaller(res), req.params.id));
    },
    async deleteKey(req, res) {
      await users.revokeKey(db, requireCaller(res), req.params.id);
      sendNoContent(res);
    },
    async getCaller(_req, res) {
      const caller = requireCaller(res);
      res.json({ userName: caller.userName, role: caller.role, keyId: caller.keyId });
    },
    async listModems(_req, res) {
      res.json(await listModems(db, requireCaller(res)));
    },
    async deleteModem(req, res) {
      await releaseModem(db, req.params.serial, (ids) => deps.events.cache.changed(ids));
      sendNoContent(res);
    },
  };
}
