/**
 * `npm run keys -- <command>`: API key administration against the configured database, with the same core
 * functions as the admin operations (`/admin/api-keys`). Only the key's hash is stored: `create` and `rotate`
 * print the key once.
 */
import { parseArgs } from 'node:util';
import type { ApiKey, ApiKeyLimits } from '../core/apiKeys/apiKey.js';
import { createApiKey } from '../core/apiKeys/createApiKey.js';
import { getApiKey } from '../core/apiKeys/getApiKey.js';
import { listApiKeys } from '../core/apiKeys/listApiKeys.js';
import { revokeApiKey } from '../core/apiKeys/revokeApiKey.js';
import { rotateApiKey } from '../core/apiKeys/rotateApiKey.js';
import { updateApiKey } from '../core/apiKeys/updateApiKey.js';
import { isGatewayError } from '../core/errors.js';
import { createDatabase } from '../store/database.js';
import { DataDirInUseError } from '../store/dataDirLock.js';
import { deriveWebhookEncryptionKey, sealWebhookSecret } from '../core/apiKeys/webhookSecret.js';
import { ConfigError, keysCliConfigFromEnvironment } from './config.js';

const usage = `Usage: npm run keys -- <command> [options]

Commands:
  create --name <name> [settings]   Create a key; prints the key once (only its hash is stored)
  list [--all]                      List keys (--all: revoked ones too)
  get <id>                          Show one key
  update <id> [settings]            Change a key's settings
  rotate <id>                       New secret for a key (printed once); the old one stops working
  revoke <id>                       Revoke a key for good

Settings:
  --name <name>                     Label of the key
  --sponsorship / --no-sponsorship  Fee sponsorship enabled or not
  --sponsorship-allowance-usd-micros <n>
                                    Fee sponsorship allowed to the key in total, micro-USD (1000000 = USD 1);
                                    sponsored gasless batches draw from it (spent is kept: raise it to top up)
  --webhook <url>                   Webhook URL (http/https; private addresses need GATEWAY_WEBHOOKS_ALLOW_PRIVATE=true)
  --webhook-header <Name=value>     Header sent with every delivery (repeatable)
  --no-webhook                      Remove the webhook (update)
  --requests-per-minute <n>         Rate limit of the key (default: GATEWAY_RATE_LIMIT_KEY_PER_MINUTE)
  --fast-fill-usd <amount>          Fast fill limit in USD
  --business-verified               Business verification done (revenue share)
  --payout-address <0x...>          Revenue share payout address
  --json                            Print JSON

The database is the gateway's: DATABASE_URL (and GATEWAY_DATABASE_SCHEMA), or GATEWAY_DATA_DIR for PGlite.
A gateway on in-memory PGlite (neither set) keeps its keys in its own process: this command cannot reach
them; use the admin operations (POST /admin/api-keys with GATEWAY_ADMIN_TOKEN) instead. PGlite allows one
process per data directory: against the GATEWAY_DATA_DIR of a running gateway this command refuses (naming
the gateway's process); stop the gateway first, or use the admin operations.
Webhooks are signed with the key itself, kept sealed: give this command the gateway's GATEWAY_WEBHOOK_SECRET_KEY
(or GATEWAY_SOLVER_PRIVATE_KEY when that is unset; on the devnet the solver's key is in .devnet/devnet.json).
Without it, create and rotate cannot seal the key: a webhook is refused, and a key made without one cannot
have one later until it is rotated where it can be sealed. Listings show each key's webhook signing state.
`;

/** What each signing state means for the operator (see `WebhookSigning`). */
const signingText: Record<ApiKey['webhookSigning'], string> = {
  ready: 'signed',
  noSecret: 'NOT SIGNED: no signing secret kept, no delivery is made (rotate the key with the encryption key set)',
  wrongEncryptionKey:
    "NOT SIGNED: the signing secret does not open with this encryption key (not the gateway's GATEWAY_WEBHOOK_SECRET_KEY / solver key?)",
  unchecked: 'signing secret kept (not checked: set GATEWAY_WEBHOOK_SECRET_KEY or GATEWAY_SOLVER_PRIVATE_KEY to check)',
};

const noEncryptionKey =
  "the gateway's webhook encryption key is not known here: set GATEWAY_WEBHOOK_SECRET_KEY to the gateway's (or GATEWAY_SOLVER_PRIVATE_KEY when the gateway derives it from the solver key; on the devnet that is solver.privateKey in .devnet/devnet.json)";

class UsageError extends Error {}

const say = (line: string) => process.stdout.write(`${line}\n`);

function describe(apiKey: ApiKey): string {
  const state = apiKey.revokedAt === null ? 'active' : `revoked ${new Date(apiKey.revokedAt).toISOString()}`;
  const parts = [
    `${apiKey.id}  ${JSON.stringify(apiKey.name)}  ${state}`,
    `  created ${new Date(apiKey.createdAt).toISOString()}; sponsorship ${apiKey.sponsorshipEnabled ? 'on' : 'off'}; limits ${JSON.stringify(apiKey.limits)}`,
    `  sponsorship allowance ${apiKey.sponsorshipAllowanceUsdMicros} micro-USD, spent ${apiKey.sponsorshipSpentUsdMicros}, reserved ${apiKey.sponsorshipReservedUsdMicros}, remaining ${apiKey.sponsorshipRemainingUsdMicros}`,
    `  webhook ${apiKey.webhook === null ? 'none' : `${apiKey.webhook.url}${apiKey.webhook.enabled ? '' : ' (disabled)'} [${signingText[apiKey.webhookSigning]}]`}` +
      `; business verified ${apiKey.businessVerified ? 'yes' : 'no'}; payout ${apiKey.payoutAddress ?? 'none'}`,
  ];
  return parts.join('\n');
}

async function run(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      sponsorship: { type: 'boolean' },
      'no-sponsorship': { type: 'boolean' },
      'sponsorship-allowance-usd-micros': { type: 'string' },
      webhook: { type: 'string' },
      'no-webhook': { type: 'boolean' },
      'webhook-header': { type: 'string', multiple: true },
      'requests-per-minute': { type: 'string' },
      'fast-fill-usd': { type: 'string' },
      'business-verified': { type: 'boolean' },
      'payout-address': { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, id] = positionals;
  if (values.help || command === undefined || command === 'help') {
    say(usage);
    return;
  }
  const needsId = (): string => {
    if (id === undefined) throw new UsageError(`${command} needs a key id`);
    return id;
  };

  const settings = () => {
    const limits: ApiKeyLimits = {};
    if (values['requests-per-minute'] !== undefined) limits.requestsPerMinute = Number(values['requests-per-minute']);
    if (values['fast-fill-usd'] !== undefined) limits.fastFillUsd = values['fast-fill-usd'];
    const headers = Object.fromEntries(
      (values['webhook-header'] ?? []).map((header) => {
        const at = header.indexOf('=');
        if (at <= 0) throw new UsageError(`--webhook-header takes Name=value, got '${header}'`);
        return [header.slice(0, at), header.slice(at + 1)];
      }),
    );
    const url = values.webhook;
    const sponsorship = values.sponsorship === true ? true : values['no-sponsorship'] === true ? false : undefined;
    return {
      ...(values.name === undefined ? {} : { name: values.name }),
      ...(sponsorship === undefined ? {} : { sponsorshipEnabled: sponsorship }),
      ...(values['sponsorship-allowance-usd-micros'] === undefined
        ? {}
        : { sponsorshipAllowanceUsdMicros: values['sponsorship-allowance-usd-micros'] }),
      ...(Object.keys(limits).length === 0 ? {} : { limits }),
      ...(url !== undefined ? { webhook: { url, headers } } : values['no-webhook'] === true ? { webhook: null } : {}),
      ...(values['business-verified'] === undefined ? {} : { businessVerified: values['business-verified'] }),
      ...(values['payout-address'] === undefined ? {} : { payoutAddress: values['payout-address'] }),
    };
  };

  const config = keysCliConfigFromEnvironment(process.env);
  if (config.databaseUrl === undefined && config.dataDir === undefined) {
    throw new UsageError(
      "No database configured: set DATABASE_URL or GATEWAY_DATA_DIR to the gateway's. (A gateway on in-memory PGlite, or on npm start's temporary directory while it runs, cannot be reached from here; use POST /admin/api-keys.)",
    );
  }
  const database = await createDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    schema: config.databaseSchema,
  });
  try {
    await database.migrate();
    const secretKey = config.webhooks?.secretKey;
    const encryptionKey =
      secretKey !== undefined
        ? Buffer.from(secretKey.slice(2), 'hex')
        : config.solverPrivateKey !== undefined
          ? deriveWebhookEncryptionKey(config.solverPrivateKey)
          : undefined;
    const ctx = {
      db: database.db,
      now: () => Date.now(),
      webhooks: encryptionKey === undefined ? undefined : { settings: { encryptionKey } },
    };
    const warn = (line: string) => process.stderr.write(`warning: ${line}\n`);
    const seal =
      encryptionKey === undefined
        ? undefined
        : (apiKeyId: string, key: string) => sealWebhookSecret(encryptionKey, apiKeyId, key);
    const options = { allowPrivateWebhooks: config.webhooksAllowPrivate ?? false, sealWebhookSecret: seal };
    const print = (value: unknown, text: string) => say(values.json ? JSON.stringify(value, null, 2) : text);
    switch (command) {
      case 'create': {
        const { name, ...rest } = settings();
        if (name === undefined) throw new UsageError('create needs --name');
        if (encryptionKey === undefined) {
          if (values.webhook !== undefined)
            throw new UsageError(
              `cannot give the key a webhook: its deliveries are signed with the key, sealed with the gateway's webhook encryption key, and ${noEncryptionKey}`,
            );
          warn(
            `the key is not kept sealed for signing webhooks (${noEncryptionKey}); it cannot have a webhook until it is rotated with that key set`,
          );
        }
        const created = await createApiKey(ctx, { name, ...rest }, options);
        print(
          created,
          `${describe(created.apiKey)}\n\nkey: ${created.key}\n(shown once: store it now; only its hash is kept)`,
        );
        return;
      }
      case 'list': {
        const apiKeys = await listApiKeys(ctx, { includeRevoked: values.all ?? false });
        print({ apiKeys }, apiKeys.length === 0 ? 'no keys' : apiKeys.map(describe).join('\n'));
        return;
      }
      case 'get': {
        const apiKey = await getApiKey(ctx, needsId());
        print({ apiKey }, describe(apiKey));
        return;
      }
      case 'update': {
        const apiKey = await updateApiKey(ctx, needsId(), settings(), options);
        print({ apiKey }, describe(apiKey));
        return;
      }
      case 'rotate': {
        if (encryptionKey === undefined) {
          const current = await getApiKey(ctx, needsId());
          if (current.webhook?.enabled === true && current.revokedAt === null)
            throw new UsageError(
              `cannot rotate ${current.id} here: its webhook would stop being signed (the new key cannot be sealed: ${noEncryptionKey})`,
            );
          warn(`the new key is not kept sealed for signing webhooks (${noEncryptionKey})`);
        }
        const rotated = await rotateApiKey(ctx, needsId(), { sealWebhookSecret: seal });
        print(
          rotated,
          `${describe(rotated.apiKey)}\n\nkey: ${rotated.key}\n(shown once; the previous key no longer works)`,
        );
        return;
      }
      case 'revoke': {
        const apiKey = await revokeApiKey(ctx, needsId());
        print({ apiKey }, describe(apiKey));
        return;
      }
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } finally {
    await database.close();
  }
}

run(process.argv.slice(2)).then(
  () => process.exit(0),
  (error: unknown) => {
    if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      error instanceof DataDirInUseError ||
      isGatewayError(error)
    ) {
      process.stderr.write(`error: ${error.message}\n`);
      if (error instanceof UsageError) process.stderr.write('(npm run keys -- --help for usage)\n');
      process.exit(2);
    }
    if (error instanceof TypeError && (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`error: ${error.message}\n(npm run keys -- --help for usage)\n`);
      process.exit(2);
    }
    console.error(error);
    process.exit(1);
  },
);
