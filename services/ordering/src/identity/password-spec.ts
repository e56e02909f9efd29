/**
 * The password lengths that specs/ordering.yaml states, read once when the module loads from the file the
 * request validator reads ({@link SPEC_FILE}), so that neither is written a second time in the code
 * (docs/architecture.md, "The spec is the single source"; test/spec-single-source.test.ts holds it).
 */
import { componentSchemaOf, loadSpec, parameterSchemaOf, specNumber } from '@sports-timing/shared';
import { SPEC_FILE } from '../version';

const spec = loadSpec(SPEC_FILE);
const newPassword = (componentSchemaOf(spec, 'NewUser').properties as Record<string, Record<string, unknown>>).password;

/** Shortest and longest password a user may set: `NewUser.password` `minLength` and `maxLength` (12 and 128). */
export const USER_PASSWORD_LENGTH = {
  min: specNumber(newPassword, 'minLength', 'NewUser.password'),
  max: specNumber(newPassword, 'maxLength', 'NewUser.password'),
} as const;

const generated = parameterSchemaOf(spec, 'devGetRandomPassword', 'length');

/** Shortest and longest generated password: `devGetRandomPassword` `length` `minimum` and `maximum` (8 and 128). */
export const GENERATED_PASSWORD_LENGTH = {
  min: specNumber(generated, 'minimum', 'devGetRandomPassword length'),
  max: specNumber(generated, 'maximum', 'devGetRandomPassword length'),
} as const;
