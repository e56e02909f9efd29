/**
 * The `timing` schema as its migrations build it: the checks of test/support/schema-checks.ts
 * (docs/database.md "What the tests check").
 */
import { SCHEMA_SERVICES } from '../../../scripts/schema-dump';
import { schemaChecks } from '../../../test/support/schema-checks';

schemaChecks(SCHEMA_SERVICES.timing);
