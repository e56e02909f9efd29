/**
 * Environment of every test file (jest `setupFiles`): password hashes at a test-only cost
 * (`PASSWORD_HASH_COST_LN`, see services/ordering/src/identity/passwords.ts) so that the suites do not spend
 * most of their time in 128 MiB scrypt hashes. Production refuses this setting.
 */
process.env.PASSWORD_HASH_COST_LN ??= '10';
