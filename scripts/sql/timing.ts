/**
 * The calls that render every statement of the timing service's repositories (`pnpm sql`, docs/database.md
 * "Checked-in SQL"), placeholders as in scripts/sql/ordering.ts. The punch page statements are rendered per
 * variant by scripts/punch-sql.ts; here `readPunchPage` shows the pair one page read runs.
 */
import type { PunchInsert } from '../../services/timing/src/db/punch-row';
import * as eventStatus from '../../services/timing/src/events/event-status.repository';
import * as events from '../../services/timing/src/events/events.repository';
import * as modems from '../../services/timing/src/modems/modems.repository';
import * as punchUpload from '../../services/timing/src/punches/punch-upload.repository';
import * as punchVisibility from '../../services/timing/src/punches/punch-visibility.repository';
import * as punchWindows from '../../services/timing/src/punches/punch-windows.repository';
import * as punches from '../../services/timing/src/punches/punches.repository';
import * as users from '../../services/timing/src/users/users.repository';
import { PLACEHOLDER_TIME as T, repository, type RepositoryStatements } from './define';
import type { Recording } from './recorder';

const dir = 'services/timing/src';

/** The recording pool as the pg pool type the raw-SQL repositories take (they only call `query` and `connect`). */
const pool = (r: Recording) => r.pool as unknown as Parameters<typeof punchUpload.uploadPunchBatch>[0];

const scope: punches.PunchScope = { modems: ['m1', 'm2'], afterId: 1000, timeFrom: null, timeTo: null };
const windowed: punches.PunchScope = { ...scope, timeFrom: 36_000_000, timeTo: 39_600_000 };
const fields: events.EventFields = { name: 'City run', isPublic: true, fromMs: 36_000_000, toMs: 39_600_000 };
const key = { userId: 3, hash: Buffer.from('key-hash'), prefix: 'st_abc', name: 'laptop' };
const punch: PunchInsert = { card: '8001234', time: 36_000_000, code: 31, type: 'finish', modem: 'm1', receptionTimeUtc: T.getTime() };

/** Every timing repository, in file order. */
export const TIMING_REPOSITORIES: RepositoryStatements[] = [
  repository(`${dir}/events/event-status.repository.ts`, eventStatus, {
    readEventStatus: (r) => eventStatus.readEventStatus(pool(r), { modems: ['m1'], timeFrom: null, timeTo: null }, T.getTime(), 10),
  }),
  repository(`${dir}/events/events.repository.ts`, events, {
    findEvent: (r) => events.findEvent(r.db, 5),
    listVisibleEvents: {
      all: (r) => events.listVisibleEvents(r.db, { all: true, ownerId: null }, { afterId: 0, limit: 50 }),
      owner: (r) => events.listVisibleEvents(r.db, { all: false, ownerId: 3 }, { afterId: 0, limit: 50 }),
    },
    findEventIdByName: (r) => events.findEventIdByName(r.db, 'City run', 3),
    countOwnedEvents: (r) => events.countOwnedEvents(r.db, 3),
    insertEventWithin: {
      capped: (r) => events.insertEventWithin(r.db, 3, fields, 20),
      uncapped: (r) => events.insertEventWithin(r.db, 3, fields, null),
    },
    updateEvent: (r) => events.updateEvent(r.db, 5, fields),
    setEventModems: (r) => events.setEventModems(r.db, 5, ['m1', 'm2']),
    deleteEvent: (r) => events.deleteEvent(r.db, 5),
    notifyEventChanged: (r) => events.notifyEventChanged(r.db, '5', 'events'),
  }),
  repository(`${dir}/modems/modems.repository.ts`, modems, {
    findModemOwners: (r) => modems.findModemOwners(r.db, ['m1', 'm2']),
    lockModemCap: (r) => modems.lockModemCap(r.db, 3),
    countModemsForCap: (r) => modems.countModemsForCap(r.db, 3, ['m1', 'm2']),
    insertModems: (r) => modems.insertModems(r.db, ['m1', 'm2'], 3),
    eventsNaming: (r) => modems.eventsNaming(r.db, ['m1', 'm2']),
    deleteModemRows: (r) => modems.deleteModemRows(r.db, 'm1'),
    listModems: {
      all: (r) => modems.listModems(r.db, null),
      owner: (r) => modems.listModems(r.db, 3),
    },
    modemsOfUserName: (r) => modems.modemsOfUserName(r.db, 'anna'),
    modemReadWindows: {
      anonymous: (r) => modems.modemReadWindows(r.db, ['m1', 'm2'], null),
      user: (r) => modems.modemReadWindows(r.db, ['m1', 'm2'], 3),
    },
  }),
  repository(
    `${dir}/punches/punch-upload.repository.ts`,
    punchUpload,
    {
      uploadPunchBatch: {
        run: (r) => punchUpload.uploadPunchBatch(pool(r), 3, false, 500_000, [punch]),
        answers: [[{ stored: 1, max_id: '1001', unknown_modems: [], foreign_modems: [] }]],
      },
      uploadPunchBatchByKey: {
        run: (r) => punchUpload.uploadPunchBatchByKey(pool(r), key.hash, 500_000, [punch]),
        answers: [[{ key_id: 7, user_id: 3, user_name: 'anna', role: 'user', stored: 1, max_id: '1001', unknown_modems: [], foreign_modems: [] }]],
      },
      notifyNewPunches: (r) => punchUpload.notifyNewPunches(pool(r), 1001),
    },
    {
      textArrayLiteral: 'formats a text[] parameter value; runs no statement',
      intArrayLiteral: 'formats an int8[] parameter value; runs no statement',
    },
  ),
  repository(`${dir}/punches/punch-visibility.repository.ts`, punchVisibility, {
    isPunchVisible: (r) => punchVisibility.isPunchVisible(pool(r), 1001),
    readVisibilityWait: (r) => punchVisibility.readVisibilityWait(pool(r)),
  }),
  repository(
    `${dir}/punches/punch-windows.repository.ts`,
    punchWindows,
    {},
    {
      modemWindowCondition: 'builds the modem-window condition the punch statements embed (rendered there)',
    },
  ),
  repository(
    `${dir}/punches/punches.repository.ts`,
    punches,
    {
      readPunchPage: {
        run: (r) => punches.readPunchPage(pool(r), scope, 'json'),
        // The walk declines (`sparse`), so the read runs the sparse statement too.
        answers: [[{ sparse: true }], [{ sparse: false, count: 0, body: '[]', total: 0, head: '0' }]],
      },
      readVisibleHead: { run: (r) => punches.readVisibleHead(pool(r)), answers: [[{ head: '0' }]] },
      countPunches: { run: (r) => punches.countPunches(pool(r), windowed), answers: [[{ n: 0 }]] },
      countPunchesFast: {
        counters: { run: (r) => punches.countPunchesFast(pool(r), scope), answers: [[{ n: 0 }]] },
        windowed: { run: (r) => punches.countPunchesFast(pool(r), windowed), answers: [[{ n: 0 }]] },
      },
      compactPunchCounts: { run: (r) => punches.compactPunchCounts(pool(r)), answers: [[{ merged: 0 }]] },
    },
    {
      pageQuery: 'builds the page statements; every variant is in sql/punch_page_*.sql (`pnpm sql`)',
      emptyBody: 'the body of an empty page; runs no statement',
    },
  ),
  repository(`${dir}/users/users.repository.ts`, users, {
    insertUser: { run: (r) => users.insertUser(r.db, 'anna', 'user'), answers: [[{ id: 3 }]] },
    findUserByName: (r) => users.findUserByName(r.db, 'anna'),
    findUserById: (r) => users.findUserById(r.db, 3),
    listUsers: (r) => users.listUsers(r.db),
    anyUserExists: (r) => users.anyUserExists(r.db),
    insertApiKeyWithin: (r) => users.insertApiKeyWithin(r.db, key, 10),
    insertApiKey: { run: (r) => users.insertApiKey(r.db, key), answers: [[{ id: 9 }]] },
    findActiveKeyOwner: (r) => users.findActiveKeyOwner(r.db, key.hash),
    listApiKeys: (r) => users.listApiKeys(r.db, 3),
    findApiKey: (r) => users.findApiKey(r.db, 9),
    revokeApiKey: (r) => users.revokeApiKey(r.db, 9, 'timing_keys'),
    isKeyActive: (r) => users.isKeyActive(r.db, 9),
    touchKeyLastUsed: (r) => users.touchKeyLastUsed(r.db, 9, 60),
  }),
];
