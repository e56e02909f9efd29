/**
 * The modem caps that specs/timing.yaml states on `postPunches`, read once when the module loads from the file
 * the request validator reads ({@link SPEC_FILE}), so that neither is written a second time in the code
 * (docs/architecture.md, "The spec is the single source"; test/spec-single-source.test.ts holds it). Here, in
 * the modems layer, because uploads (punches) and events both register modems under them.
 */
import { findOperation, loadSpec, specNumber } from '@sports-timing/shared';
import { SPEC_FILE } from '../version';

const postPunches = findOperation(loadSpec(SPEC_FILE), 'postPunches').operation;

/** Most new modems one upload (or event) may register for a non-admin caller: `postPunches` `x-max-new-modems` (100). */
export const MAX_NEW_MODEMS_PER_UPLOAD = specNumber(postPunches, 'x-max-new-modems', 'postPunches');

/** Most modems a non-admin user holds, uploads and events alike: `postPunches` `x-max-modems-per-user` (1,000). */
export const MAX_MODEMS_PER_USER = specNumber(postPunches, 'x-max-modems-per-user', 'postPunches');
