/**
 * The development defaults a shared deployment refuses (README "What production changes"): with `APP_ENV=staging`
 * or `production` the ordering service does not start on a secret it would otherwise take from the source or
 * generate into `DATA_DIR/keys`. A generated key is this instance's own: a second instance behind the same
 * balancer generates another and refuses the first one's tokens, cannot decrypt what it encrypted, and issues
 * license keys nobody else verifies; a secret from the source is known to everyone who read it.
 */
import { ConfigError, ConfigErrors, DEV_ERP_WEBHOOK_SECRET, isDeployment } from '@sports-timing/shared';
import { DEV_ERP_API_TOKENS, DEV_PAYMENT_API_KEY, type OrderingConfig } from './config';

/** The settings this check reads. */
type Checked = Pick<
  OrderingConfig,
  'environment' | 'jwtPrivateKeyPem' | 'encryptionKeys' | 'licenseSigningKeyPem' | 'licenseSecretKey' | 'erpWebhookSecret' | 'paymentApiKey' | 'erpApiTokens'
>;

/**
 * Throws {@link ConfigErrors}, one line per refused variable, when `config.environment` is `staging` or
 * `production` and a key would be generated on the fly (`JWT_PRIVATE_KEY`, `ENCRYPTION_KEYS`,
 * `LICENSE_SIGNING_KEY`, `LICENSE_SECRET_KEY` unset) or a secret is a simulator's or the source's development
 * value (`PAYMENT_API_KEY` unset or the payment simulator's key, `ERP_API_TOKEN_WECLAPP[_SANDBOX]` the ERP
 * simulator's, `ERP_WEBHOOK_SECRET` the development secret). No line shows a value. Development and test: no-op.
 */
export function refuseDevelopmentDefaults(config: Checked): void {
  if (!isDeployment(config.environment)) return;
  const env = `APP_ENV=${config.environment}`;
  const errors: ConfigError[] = [];
  const generated = (name: string, value: string | undefined, what: string) => {
    if (value === undefined)
      errors.push(
        new ConfigError(
          name,
          '',
          `${what} configured with ${env}: a key generated into DATA_DIR/keys is one instance's own, another instance does not accept it`,
        ),
      );
  };
  const development = (name: string, isDevelopmentValue: boolean, what: string) => {
    if (isDevelopmentValue) errors.push(new ConfigError(name, '***', `${what} with ${env}, not the development value that is in the source`));
  };
  generated('JWT_PRIVATE_KEY', config.jwtPrivateKeyPem, 'an Ed25519 private key (PKCS#8 PEM)');
  generated('ENCRYPTION_KEYS', config.encryptionKeys, 'a key ring (<version>:<base64 32 bytes>)');
  generated('LICENSE_SIGNING_KEY', config.licenseSigningKeyPem, 'an Ed25519 private key (PKCS#8 PEM)');
  generated('LICENSE_SECRET_KEY', config.licenseSecretKey, 'a secret of at least 32 characters');
  development('PAYMENT_API_KEY', config.paymentApiKey === DEV_PAYMENT_API_KEY, "the payment provider's API key");
  development('ERP_API_TOKEN_WECLAPP', config.erpApiTokens.weclapp === DEV_ERP_API_TOKENS.weclapp, "the ERP tenant's API token (or none)");
  development(
    'ERP_API_TOKEN_WECLAPP_SANDBOX',
    config.erpApiTokens.weclappSandbox === DEV_ERP_API_TOKENS.weclappSandbox,
    "the ERP tenant's API token (or none)",
  );
  development('ERP_WEBHOOK_SECRET', config.erpWebhookSecret === DEV_ERP_WEBHOOK_SECRET, 'a secret of your own (or none: webhooks are refused)');
  if (errors.length > 0) throw new ConfigErrors(errors);
}
