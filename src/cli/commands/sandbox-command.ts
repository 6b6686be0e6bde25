import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Command, Option } from 'commander';
import { describeIssues } from '../../carriers/payload-validation.js';
import { UserError } from '../../errors/user-error.js';
import type { SandboxCarrier } from '../../sandbox/carriers/sandbox-carrier.js';
import { SANDBOX_CARRIERS } from '../../sandbox/carriers/sandbox-carriers.js';
import { startSandbox } from '../../sandbox/sandbox.js';
import { type SandboxOptionsInput, SandboxOptionsSchema } from '../../sandbox/sandbox-options.js';
import type { Account } from '../../sandbox/world/order-plan.js';
import { SETTINGS } from '../../settings/catalog.js';
import { createLogger, type LogLevel, logLevelOption } from '../logger.js';

/** Environment variable holding the password the sandbox sends with HTTP Basic callbacks. */
export const CALLBACK_PASSWORD_ENV = SETTINGS.sandboxCallbackPassword.env;
/**
 * Environment variable holding the address a served carrier's webhooks go to, as a shop registers it
 * with the carrier: it may carry the shop's token, so never a flag.
 */
function webhookUrlEnvOf(carrierId: string): string {
  return `PARCEL_RECON_SANDBOX_${carrierId.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_WEBHOOK_URL`;
}

interface Knob {
  readonly flag: string;
  /** Where the value goes in the sandbox's options. */
  readonly path: string;
  readonly description: string;
  readonly kind: 'number' | 'text' | 'choice';
  readonly choices?: readonly string[];
  readonly defaultShown?: string;
}

/** The knobs of a carrier the sandbox serves beside 247Express, made from its declaration. */
function servedCarrierKnobs(carrier: SandboxCarrier): Knob[] {
  const section = `carriers.${carrier.id}`;
  return [
    {
      flag: `--${carrier.id}-orders-per-account <n>`,
      path: `${section}.ordersPerAccount`,
      kind: 'number',
      description: `${carrier.name}'s orders per account, served under ${carrier.basePath} (their own world)`,
      defaultShown: String(carrier.world.ordersPerAccount),
    },
    {
      flag: `--${carrier.id}-code-prefix <letters>`,
      path: `${section}.codePrefix`,
      kind: 'text',
      description: `${carrier.name}'s order codes are PREFIX, account digit, 8-digit number`,
      defaultShown: carrier.world.codePrefix,
    },
    {
      flag: `--${carrier.id}-webhook-attempts <n>`,
      path: `${section}.webhooks.maxAttempts`,
      kind: 'number',
      description: `attempts per ${carrier.name} webhook, to the address in $${webhookUrlEnvOf(carrier.id)} (none sent when unset)`,
      defaultShown: String(carrier.webhooks.maxAttempts),
    },
    {
      flag: `--${carrier.id}-webhook-retry-ms <ms>`,
      path: `${section}.webhooks.retryBaseMs`,
      kind: 'number',
      description: `wait before the next attempt of a ${carrier.name} webhook`,
      defaultShown: String(carrier.webhooks.retryBaseMs),
    },
  ];
}

/** Every knob of the sandbox, in the order --help lists them. */
const KNOBS: readonly Knob[] = [
  {
    flag: '--host <address>',
    path: 'host',
    kind: 'text',
    description: 'address to listen on',
    defaultShown: '127.0.0.1',
  },
  {
    flag: '--port <port>',
    path: 'port',
    kind: 'number',
    description: 'port to listen on (0 picks a free one)',
    defaultShown: '8247',
  },
  {
    flag: '--seed <n>',
    path: 'seed',
    kind: 'number',
    description: 'world seed: the same seed and start give the same accounts, keys and orders',
    defaultShown: '1',
  },
  {
    flag: '--accounts <n>',
    path: 'accounts',
    kind: 'number',
    description: 'number of partner accounts, each with its own API key (1 to 9)',
    defaultShown: '3',
  },
  {
    flag: '--orders-per-account <n>',
    path: 'ordersPerAccount',
    kind: 'number',
    description: 'orders per account (generated on demand; millions are fine)',
    defaultShown: '500',
  },
  {
    flag: '--start <when>',
    path: 'start',
    kind: 'text',
    description: "the clock's start: a date-time (no offset means UTC+07:00) or 'now'",
    defaultShown: 'now',
  },
  {
    flag: '--clock <mode>',
    path: 'clockMode',
    kind: 'choice',
    choices: ['manual', 'realtime'],
    description: 'manual: time stands still until moved (POST /_sandbox/clock); realtime: it runs with the wall clock',
    defaultShown: 'realtime',
  },
  {
    flag: '--clock-speed <x>',
    path: 'clockSpeed',
    kind: 'number',
    description: 'realtime clock speed-up (60 makes a minute an hour)',
    defaultShown: '1',
  },
  {
    flag: '--history-days <n>',
    path: 'historyDays',
    kind: 'number',
    description: 'orders are created from this many days before the start...',
    defaultShown: '10',
  },
  {
    flag: '--future-days <n>',
    path: 'futureDays',
    kind: 'number',
    description: '...to this many days after it',
    defaultShown: '0',
  },
  {
    flag: '--code-prefix <letters>',
    path: 'codePrefix',
    kind: 'text',
    description: 'order codes are PREFIX, account digit, 8-digit number',
    defaultShown: 'EX',
  },
  {
    flag: '--cancel-rate <share>',
    path: 'lifecycle.cancelRate',
    kind: 'number',
    description: 'share of orders cancelled (status 18)',
    defaultShown: '0.04',
  },
  {
    flag: '--lost-rate <share>',
    path: 'lifecycle.lostRate',
    kind: 'number',
    description: 'share of orders lost (status 19)',
    defaultShown: '0.02',
  },
  {
    flag: '--confiscated-rate <share>',
    path: 'lifecycle.confiscatedRate',
    kind: 'number',
    description: 'share of orders confiscated (status 32)',
    defaultShown: '0.01',
  },
  {
    flag: '--failed-attempt-rate <share>',
    path: 'lifecycle.failedAttemptRate',
    kind: 'number',
    description: 'chance a delivery attempt fails (status 16 with a delay code)',
    defaultShown: '0.3',
  },
  {
    flag: '--max-attempts <n>',
    path: 'lifecycle.maxAttempts',
    kind: 'number',
    description: 'failed attempts before the order is returned (27, 28)',
    defaultShown: '3',
  },
  {
    flag: '--anomaly-rate <share>',
    path: 'lifecycle.anomalyRate',
    kind: 'number',
    description: 'share of orders billed with a deliberate anomaly (see GET /_sandbox/truth/anomalies)',
    defaultShown: '0.05',
  },
  // Not --no-image-rate: commander reads a --no- flag as the negation of --image-rate.
  {
    flag: '--imageless-rate <share>',
    path: 'lifecycle.noImageRate',
    kind: 'number',
    description: 'share of delivered orders without images',
    defaultShown: '0.1',
  },
  {
    flag: '--per-key-limit <n>',
    path: 'limits.perKeyDaily',
    kind: 'number',
    description: 'tracking lookups per key per carrier day before APIKEY_LIMIT',
    defaultShown: '200000',
  },
  {
    flag: '--global-limit <n>',
    path: 'limits.globalDaily',
    kind: 'number',
    description: 'tracking lookups in total per carrier day',
    defaultShown: '3000000',
  },
  {
    flag: '--day-utc-offset <minutes>',
    path: 'limits.dayUtcOffsetMinutes',
    kind: 'number',
    description: "UTC offset of the quota day's midnight",
    defaultShown: '420',
  },
  {
    flag: '--latency-min <ms>',
    path: 'faults.latencyMinMs',
    kind: 'number',
    description: 'least injected latency per answer',
    defaultShown: '0',
  },
  {
    flag: '--latency-max <ms>',
    path: 'faults.latencyMaxMs',
    kind: 'number',
    description: 'greatest injected latency (uniform between min and max)',
    defaultShown: '0',
  },
  {
    flag: '--exception-rate <share>',
    path: 'faults.exceptionRate',
    kind: 'number',
    description: 'share of tracking lookups answered errorCode EXCEPTION',
    defaultShown: '0',
  },
  {
    flag: '--server-error-rate <share>',
    path: 'faults.serverErrorRate',
    kind: 'number',
    description: 'share of requests answered HTTP 500/502/503',
    defaultShown: '0',
  },
  {
    flag: '--reset-rate <share>',
    path: 'faults.resetRate',
    kind: 'number',
    description: 'share of requests whose connection is reset',
    defaultShown: '0',
  },
  {
    flag: '--hang-rate <share>',
    path: 'faults.hangRate',
    kind: 'number',
    description: 'share of requests never answered',
    defaultShown: '0',
  },
  {
    flag: '--hang-ms <ms>',
    path: 'faults.hangMs',
    kind: 'number',
    description: 'a hung request is closed after this long',
    defaultShown: '30000',
  },
  {
    flag: '--malformed-rate <share>',
    path: 'faults.malformedRate',
    kind: 'number',
    description: 'share of requests answered with a truncated body',
    defaultShown: '0',
  },
  {
    flag: '--rate-limit-rate <share>',
    path: 'faults.rateLimitRate',
    kind: 'number',
    description: 'share of requests answered HTTP 429 with Retry-After',
    defaultShown: '0',
  },
  {
    flag: '--retry-after <seconds>',
    path: 'faults.retryAfterSeconds',
    kind: 'number',
    description: 'Retry-After of a 429 answer',
    defaultShown: '1',
  },
  {
    flag: '--callback-url <url>',
    path: 'callbacks.url',
    kind: 'text',
    description: "partner's address: status callbacks are POSTed to URL/IntergrationAPI (none when unset)",
  },
  {
    flag: '--callback-auth <mode>',
    path: 'callbacks.auth',
    kind: 'choice',
    choices: ['apikey', 'basic'],
    description: `apikey: the account's key in the body's ApiKey; basic: HTTP Basic with --callback-basic-user and $${CALLBACK_PASSWORD_ENV}`,
    defaultShown: 'apikey',
  },
  {
    flag: '--callback-basic-user <name>',
    path: 'callbacks.basicUser',
    kind: 'text',
    description: 'user name for HTTP Basic callbacks',
  },
  {
    flag: '--callback-attempts <n>',
    path: 'callbacks.maxAttempts',
    kind: 'number',
    description: 'attempts per callback before giving up',
    defaultShown: '5',
  },
  {
    flag: '--callback-retry-ms <ms>',
    path: 'callbacks.retryBaseMs',
    kind: 'number',
    description: 'first retry delay, doubled each attempt, with jitter',
    defaultShown: '500',
  },
  {
    flag: '--callback-timeout-ms <ms>',
    path: 'callbacks.timeoutMs',
    kind: 'number',
    description: "time allowed for the partner's answer",
    defaultShown: '5000',
  },
  {
    flag: '--callback-concurrency <n>',
    path: 'callbacks.concurrency',
    kind: 'number',
    description: 'callbacks in flight at once',
    defaultShown: '8',
  },
  {
    flag: '--callback-drop-rate <share>',
    path: 'callbacks.dropRate',
    kind: 'number',
    description: 'share of status changes never sent (GET /_sandbox/truth/callbacks lists them)',
    defaultShown: '0',
  },
  {
    flag: '--callback-duplicate-rate <share>',
    path: 'callbacks.duplicateRate',
    kind: 'number',
    description: 'share of callbacks sent twice',
    defaultShown: '0',
  },
  {
    flag: '--customer-auth-header <name>',
    path: 'customerAuthHeader',
    kind: 'text',
    description: 'header carrying the API key on the price and images operations',
    defaultShown: 'ApiKey',
  },
  {
    flag: '--image-bytes <n>',
    path: 'imageBytes',
    kind: 'number',
    description: 'size of each image file served',
    defaultShown: '4096',
  },
  ...SANDBOX_CARRIERS.flatMap(servedCarrierKnobs),
];

const CLI_DEFAULTS: Record<string, unknown> = { port: 8247, start: 'now', clockMode: 'realtime' };

function optionKey(knob: Knob): string {
  return new Option(knob.flag).attributeName();
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    node[part] ??= {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}

/** Builds the sandbox's options from parsed flags; a wrong value names its flag. */
export function sandboxOptionsFromFlags(
  flags: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv,
): SandboxOptionsInput {
  const input: Record<string, unknown> = { ...CLI_DEFAULTS };
  for (const knob of KNOBS) {
    const raw = flags[optionKey(knob)];
    if (raw === undefined) continue;
    const value = knob.kind === 'number' ? Number(raw) : raw;
    if (knob.kind === 'number' && (raw.trim() === '' || !Number.isFinite(value))) {
      throw new UserError(`${knob.flag.split(' ')[0]}: not a number: ${JSON.stringify(raw)}`);
    }
    setPath(input, knob.path, value);
  }
  const password = env[CALLBACK_PASSWORD_ENV];
  if (password !== undefined) setPath(input, 'callbacks.basicPassword', password);
  for (const carrier of SANDBOX_CARRIERS) {
    const webhookUrl = env[webhookUrlEnvOf(carrier.id)];
    if (webhookUrl !== undefined) setPath(input, `carriers.${carrier.id}.webhooks.url`, webhookUrl);
  }
  const checked = SandboxOptionsSchema.safeParse(input);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const path = issue.path.join('.');
    const knob = KNOBS.find((k) => k.path === path);
    const webhookCarrier = SANDBOX_CARRIERS.find((carrier) => path === `carriers.${carrier.id}.webhooks.url`);
    if (webhookCarrier) throw new UserError(`$${webhookUrlEnvOf(webhookCarrier.id)}: not an http(s) address`);
    throw new UserError(
      knob ? `${knob.flag.split(' ')[0]}: ${issue.message}` : describeIssues(checked.error.issues, 'sandbox options'),
    );
  }
  const options = checked.data;
  if (
    options.callbacks.auth === 'basic' &&
    (options.callbacks.basicUser === undefined || options.callbacks.basicPassword === undefined)
  ) {
    throw new UserError(
      `--callback-auth basic needs --callback-basic-user and the password in $${CALLBACK_PASSWORD_ENV}`,
    );
  }
  return input as SandboxOptionsInput;
}

/** Where a served carrier's keys go beside `--keys-out`: `sandbox-keys.json` gives `sandbox-keys.ghn.json`. */
function carrierKeysFile(keysOut: string, carrierId: string): string {
  return keysOut.endsWith('.json')
    ? `${keysOut.slice(0, -'.json'.length)}.${carrierId}.json`
    : `${keysOut}.${carrierId}`;
}

/** Writes keys as the `--keys-file` JSON ({alias: key}, or {alias: {key, shopId}}), readable by the owner only. */
async function writeKeysFile(
  path: string,
  keys: Record<string, string | { key: string; shopId: number }>,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
}

export function sandboxCommand(): Command {
  const command = new Command('sandbox')
    .description(
      "Run the carrier sandbox: 247Express's tracking lookup, price calculation and order images operations, " +
        'with its errors, daily limits and injectable faults, over synthetic orders from a seed, and its status callbacks; ' +
        `the APIs and webhooks of ${SANDBOX_CARRIERS.map((carrier) => carrier.name).join(', ')} over orders of their own. ` +
        'Control and ground truth under /_sandbox/ (see docs/commands.md).',
    )
    .option(
      '--keys-out <file>',
      "write the accounts' API keys to FILE as {alias: key} (mode 0600), for --keys-file; each other carrier's beside it (FILE.ghn.json)",
    )
    .addOption(logLevelOption().default('info'));
  for (const knob of KNOBS) {
    const shownDefault = knob.defaultShown === undefined ? '' : ` (default: ${knob.defaultShown})`;
    const option = new Option(knob.flag, `${knob.description}${shownDefault}`);
    if (knob.choices) option.choices(knob.choices);
    command.addOption(option);
  }
  command.action(async (flags: Record<string, string | undefined>) => {
    // The flag's choices are the log levels: commander refused any other value.
    const logger = createLogger({ level: flags.logLevel as LogLevel });
    const options = sandboxOptionsFromFlags(flags, process.env);
    const sandbox = await startSandbox(options, logger).catch((error: unknown) => {
      const code = (error as { code?: string }).code;
      if (code === 'EADDRINUSE' || code === 'EACCES')
        throw new UserError(
          `cannot listen on ${String(options.host ?? '127.0.0.1')}:${String(options.port)}: ${code}`,
          'LISTEN_FAILED',
        );
      throw error;
    });
    const accounts = sandbox.state.world.accounts;
    const keysOut = flags.keysOut;
    const carrierKeysFiles: Record<string, string> = {};
    if (keysOut) {
      // Without its keys files the partner's side cannot use the sandbox: it stops rather than serve.
      const written = async () => {
        await writeKeysFile(keysOut, Object.fromEntries(accounts.map((a) => [a.alias, a.apiKey])));
        for (const { carrier, world } of sandbox.state.carriers.values()) {
          const path = carrierKeysFile(keysOut, carrier.id);
          const keyOf = (a: Account) =>
            carrier.shopOf ? { key: a.apiKey, shopId: Number(carrier.shopOf(a)) } : a.apiKey;
          await writeKeysFile(path, Object.fromEntries(world.accounts.map((a) => [a.alias, keyOf(a)])));
          carrierKeysFiles[carrier.id] = path;
        }
      };
      await written().catch(async (error: unknown) => {
        await sandbox.stop();
        throw error;
      });
    }
    logger.info(
      {
        url: sandbox.url,
        trackingUrl: `${sandbox.url}/api/Order/v1/Tracking`,
        accounts: accounts.map((a) => ({
          alias: a.alias,
          clientHubID: a.clientHubID,
          firstOrder: sandbox.state.world.orderCode(a.index, 0),
        })),
        keysFile: keysOut ?? null,
        carriers: Object.fromEntries(
          [...sandbox.state.carriers.values()].map(({ carrier }) => [
            carrier.id,
            { trackingUrl: `${sandbox.url}${carrier.basePath}`, keysFile: carrierKeysFiles[carrier.id] ?? null },
          ]),
        ),
      },
      'carrier sandbox listening',
    );
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await sandbox.stop();
    logger.info({}, 'carrier sandbox stopped');
  });
  return command;
}
