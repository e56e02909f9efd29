/**
 * The modem caps that specs/timing.yaml states on `postPunches`, read from the app's loaded spec (composition.ts),
 * so that neither is written a second time in the code (docs/architecture.md, "The spec is the single source";
 * test/spec-single-source.test.ts holds it). Here, in the modems layer, because uploads (punches) and events
 * both register modems under them.
 */
import { findOperation, specNumber, type OpenApiDocument } from '@sports-timing/shared';

/** The modem caps of one app's spec. */
export interface ModemLimits {
  /** Most new modems one upload (or event) may register for a non-admin caller: `postPunches` `x-max-new-modems` (100). */
  maxNewModemsPerUpload: number;
  /** Most modems a non-admin user holds, uploads and events alike: `postPunches` `x-max-modems-per-user` (1,000). */
  maxModemsPerUser: number;
}

/** The {@link ModemLimits} `spec` states; throws (at start-up) when it no longer states one (shared spec-values.ts). */
export function modemLimits(spec: OpenApiDocument): ModemLimits {
  const postPunches = findOperation(spec, 'postPunches').operation;
  return {
    maxNewModemsPerUpload: specNumber(postPunches, 'x-max-new-modems', 'postPunches'),
    maxModemsPerUser: specNumber(postPunches, 'x-max-modems-per-user', 'postPunches'),
  };
}
