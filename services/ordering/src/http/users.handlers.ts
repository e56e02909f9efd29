/**
 * Handlers of the users operations (tag `users`) and of the service-client registry; thin: the
 * rules live in `identity/users.service.ts` and `identity/service-clients.service.ts`.
 */
import { clientIp, principalOf, type Handlers } from '@sports-timing/shared';
import type { Principal } from '../auth/principal';
import type { OrderingContext } from '../composition';
import type { operations } from '../generated/openapi';

/** users handlers. */
export function usersHandlers(ctx: OrderingContext): Handlers<operations> {
  const { users, clients } = ctx.services.identity;
  const caller = (res: { locals: Record<string, unknown> }) => principalOf<Principal>(res as never)!;
  return {
    async getUser(req, res) {
      res.json(await users.get(caller(res), req.params.id));
    },
    async getUserByName(req, res) {
      res.json(await users.getByName(caller(res), req.query.userName));
    },
    async listUsers(_req, res) {
      res.json(await users.list());
    },
    async createUser(req, res) {
      res.json(await users.create(req.body));
    },
    async updateUserProfile(req, res) {
      res.json(await users.updateProfile(caller(res), req.body, clientIp(req)));
    },
    async verifyUserEmail(req, res) {
      res.json(await users.verifyEmail(req.body));
    },
    async updateUserRoles(req, res) {
      res.json(await users.updateRoles(req.body));
    },
    async listServiceClients(_req, res) {
      res.json(await clients.list());
    },
    async createServiceClient(req, res) {
      res.json(await clients.create(req.body));
    },
  };
}
