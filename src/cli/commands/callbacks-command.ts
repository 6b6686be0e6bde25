import { Command, Option } from 'commander';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  apiKeyAuthenticator,
  basicAuthenticator,
  type CallbackAuthenticator,
  urlTokenAuthenticator,
} from '../../callbacks/callback-auth.js';
import { type CallbackEndpoint, startCallbackReceiver } from '../../callbacks/callback-receiver.js';
import { ingestCallbackJournalAsGuest, type JournalIngestResult } from '../../callbacks/journal-ingest.js';
import type { KeyRing } from '../../carriers/client/key-ring.js';
import { KNOWN_CARRIERS } from '../../carriers/known-carriers.js';
import { EXIT } from '../../errors/exit-codes.js';
import { UserError } from '../../errors/user-error.js';
import { SETTINGS, type Settings } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import type { ResolvedSettings } from '../../settings/resolve-settings.js';
import { dataFolder, defaultDataDir } from '../../warehouse/data-folder.js';
import { readPrivateFile, settingsKeyRing } from '../api-keys-config.js';
import { checkFlags } from '../flag-check.js';
import { createLogger, LOG_LEVELS, logLevelOption } from '../logger.js';
import { runClock } from '../run-clock.js';
import { openWarehouseForCommand } from '../warehouse-access.js';
import { WAREHOUSE_BUSY_WAIT_MS } from '../warehouse-busy-wait.js';

const CALLBACK_USER_ENV = SETTINGS.callbackUser.env;
const CALLBACK_PASSWORD_ENV = SETTINGS.callbackPassword.env;
const CALLBACK_TOKEN_ENV = SETTINGS.callbackToken.env;

const positiveInt = z.coerce.number().int().positive();
const byteCount = z.coerce.number().int().min(0);
const logLevel = z.enum(LOG_LEVELS).default('info');

const ServeFlagsSchema = z.object({
  port: z.coerce.number().int().min(0).max(65_535),
  host: z.string().min(1).default('127.0.0.1'),
  auth: z.enum(['apikey', 'basic']).default('apikey'),
  passwordFile: z.string().optional(),
  maxBodyBytes: positiveInt.default(64 * 1024),
  ingestIntervalMs: positiveInt.default(5_000),
  segmentBytes: positiveInt.default(64 * 1024 * 1024),
  journalReserveBytes: byteCount.default(16 * 1024 * 1024),
  journalLowSpaceBytes: byteCount.default(256 * 1024 * 1024),
  logLevel,
});

const IngestFlagsSchema = z.object({
  json: z.boolean().default(false),
  logLevel,
});

/** How callbacks authenticate, and the partner's keys when configured, to be cleared from what is kept. */
async function authenticatorFrom(
  flags: z.output<typeof ServeFlagsSchema>,
  settings: ResolvedSettings<Settings>,
): Promise<{ authenticator: CallbackAuthenticator; keys: KeyRing | undefined }> {
  if (flags.auth === 'apikey') {
    const keys = await settingsKeyRing(settings);
    return { authenticator: apiKeyAuthenticator(keys), keys };
  }
  const { origins, values } = settings;
  const keys =
    origins.keysFile.kind !== 'default' || origins.apiKeys.kind !== 'default'
      ? await settingsKeyRing(settings)
      : undefined;
  const user = values.callbackUser;
  if (user === undefined)
    throw new UserError(`--auth basic needs the user name: --basic-user NAME or $${CALLBACK_USER_ENV}`);
  const password =
    flags.passwordFile !== undefined
      ? (await readPrivateFile(flags.passwordFile, 'password file')).replace(/\r?\n$/, '')
      : values.callbackPassword;
  if (password === undefined || password === '')
    throw new UserError(
      `--auth basic needs the password: $${CALLBACK_PASSWORD_ENV} or --password-file FILE (mode 600; never on the command line)`,
    );
  return { authenticator: basicAuthenticator(user, password), keys };
}

/** The carriers' callbacks the receiver takes, and lines saying which it does not take and why. */
interface ReceivedCallbacks {
  readonly endpoints: [CallbackEndpoint, ...CallbackEndpoint[]];
  readonly notReceived: readonly { readonly carrier: string; readonly path: string; readonly why: string }[];
}

/**
 * Each known carrier's callbacks, on its path: a carrier that sends a key back is checked by --auth;
 * one that signs nothing by the token of the address registered with it, and not received without one.
 */
function callbackEndpoints(authenticator: CallbackAuthenticator, token: string | undefined): ReceivedCallbacks {
  const endpoints: CallbackEndpoint[] = [];
  const notReceived: ReceivedCallbacks['notReceived'][number][] = [];
  for (const carrier of KNOWN_CARRIERS) {
    const { callbacks } = carrier;
    if (callbacks === undefined) continue;
    if (callbacks.credential.kind === 'body-key') {
      endpoints.push({ carrier: carrier.id, callbacks, authenticator });
    } else if (token !== undefined) {
      endpoints.push({ carrier: carrier.id, callbacks, authenticator: urlTokenAuthenticator(token) });
    } else {
      notReceived.push({
        carrier: carrier.id,
        path: callbacks.path,
        why: `${carrier.name}'s webhooks are not received: set $${CALLBACK_TOKEN_ENV} and register ${callbacks.path}?token=TOKEN with ${carrier.name}`,
      });
    }
  }
  const [first, ...rest] = endpoints;
  if (first === undefined) throw new UserError('no carrier sends callbacks the receiver can check');
  return { endpoints: [first, ...rest], notReceived };
}

function serveCommand(): Command {
  const command = new Command('serve').description(
    `Receive the carriers' status callbacks (${KNOWN_CARRIERS.flatMap((carrier) => (carrier.callbacks === undefined ? [] : [`${carrier.name}'s on POST ${carrier.callbacks.path}`])).join(', ')}): journal each to disk before acknowledging it, load the journal into the warehouse when it is free.`,
  );
  return withSettingOptions(command, 'callbacks serve', SETTINGS)
    .requiredOption('--port <n>', 'port to listen on (0: any free port, logged)')
    .option('--host <address>', 'address to listen on (default: 127.0.0.1)')
    .addOption(
      new Option(
        '--auth <mode>',
        "247Express's callbacks: apikey: the body's ApiKey must be one of the tracking keys; basic: HTTP Basic",
      )
        .choices(['apikey', 'basic'])
        .default('apikey'),
    )
    .option(
      '--password-file <file>',
      `with --auth basic: file holding the password, mode 600 (default: $${CALLBACK_PASSWORD_ENV})`,
    )
    .option('--max-body-bytes <n>', 'larger bodies are answered 413 (default: 65536)')
    .option(
      '--ingest-interval-ms <ms>',
      'how often the journal is loaded into the warehouse when it is free (default: 5000)',
    )
    .option('--segment-bytes <n>', 'journal segment size before a new one is begun (default: 67108864)')
    .option(
      '--journal-reserve-bytes <n>',
      "disk space held in the journal's reserve file, given up when the disk fills; 0: none (default: 16777216)",
    )
    .option(
      '--journal-low-space-bytes <n>',
      "warn, and report degraded health, when the journal's disk has less free (default: 268435456)",
    )
    .addOption(logLevelOption())
    .addHelpText(
      'after',
      `
GHN's webhooks: GHN signs nothing; they are received only when $${CALLBACK_TOKEN_ENV} is set, on the address
registered with GHN: https://HOST/ghn/webhook?token=TOKEN.
Answers {"IsError":false,"ErrorMessage":""} (GHN: {"code":200,"message":"Success"}) once the callback is on disk; 400 not JSON or not a valid callback,
401 wrong or missing credential or token, 413 body too large, 415 not application/json, 503 the journal could not be written
(its disk full even after giving up the reserve: send again, it recovers by itself once there is room).
GET /health: acknowledged and rejected counts, journal backlog and disk space, last load into the warehouse.
The API keys (--keys-file, $PARCEL_RECON_API_KEYS): with --auth apikey what callbacks must carry; with either, cleared from every text kept.
Exit codes: 0 stopped (SIGINT/SIGTERM) with the journal loaded; 2 bad input or a journal directory that cannot be
written; 3 stopped, the journal kept for a later load (warehouse busy); 4 the port or the journal is in use by
another process.`,
    )
    .action(async (raw: Record<string, unknown>) => {
      const flags = checkFlags(ServeFlagsSchema, raw);
      const logger = createLogger({ level: flags.logLevel });
      const settings = await loadSettings('callbacks serve', raw, process.env);
      const { authenticator, keys } = await authenticatorFrom(flags, settings);
      const received = callbackEndpoints(authenticator, settings.values.callbackToken);
      // Listening from the start, and for every signal: a signal during startup or a second one while
      // draining must not kill the process with callbacks acknowledged but not yet loaded.
      let signalled: (signal: NodeJS.Signals) => void = () => undefined;
      const stopRequested = new Promise<NodeJS.Signals>((resolve) => (signalled = resolve));
      process.on('SIGINT', signalled);
      process.on('SIGTERM', signalled);
      try {
        await serveUntilSignalled(
          flags,
          { dbPath: settings.values.warehouse, journalDir: settings.values.callbackJournal },
          { received, keys },
          logger,
          stopRequested,
        );
      } finally {
        process.off('SIGINT', signalled);
        process.off('SIGTERM', signalled);
      }
    });
}

async function serveUntilSignalled(
  flags: z.output<typeof ServeFlagsSchema>,
  { dbPath, journalDir }: { dbPath: string; journalDir: string },
  { received, keys }: { received: ReceivedCallbacks; keys: KeyRing | undefined },
  logger: Logger,
  stopRequested: Promise<NodeJS.Signals>,
): Promise<void> {
  let receiver: Awaited<ReturnType<typeof startCallbackReceiver>>;
  try {
    receiver = await startCallbackReceiver({
      host: flags.host,
      port: flags.port,
      endpoints: received.endpoints,
      keys,
      maxBodyBytes: flags.maxBodyBytes,
      journalDir,
      segmentBytes: flags.segmentBytes,
      reserveBytes: flags.journalReserveBytes,
      lowSpaceBytes: flags.journalLowSpaceBytes,
      dbPath,
      spoolDir: dataFolder(defaultDataDir(dbPath)).callbackSpool,
      ingestIntervalMs: flags.ingestIntervalMs,
      logger,
      now: runClock(process.env),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new UserError(`port ${flags.port} on ${flags.host} is in use by another process`, 'PORT_IN_USE');
    if (code === 'EADDRNOTAVAIL') throw new UserError(`--host ${flags.host}: not an address of this machine`);
    throw error;
  }
  for (const { carrier, path, why } of received.notReceived) logger.info({ carrier, path }, why);
  logger.info(
    {
      url: receiver.url,
      endpoints: received.endpoints.map(({ carrier, callbacks, authenticator }) => ({
        carrier,
        path: callbacks.path,
        auth: authenticator.method,
      })),
      journalDir,
      db: dbPath,
    },
    'callback receiver listening',
  );
  const signal = await stopRequested;
  logger.info({ signal }, 'stopping: finishing the requests under way, then loading the journal');
  const stopped = await receiver.stop();
  if (stopped.drained) {
    logger.info('callback receiver stopped; the journal is loaded');
    process.exitCode = EXIT.OK;
  } else {
    logger.warn(
      { backlogBytes: stopped.backlogBytes, journalDir },
      'callback receiver stopped; the journal stays for `parcel-recon callbacks ingest` or the next track run',
    );
    process.exitCode = EXIT.PARTIAL;
  }
}

/** What the load left out, when anything: lines that were not JSON, segments ending in part of a line. */
function skippedNote(result: JournalIngestResult): string {
  const skipped = [
    ...(result.unreadableLines > 0 ? [`${result.unreadableLines} unreadable lines`] : []),
    ...(result.tornTails > 0 ? [`${result.tornTails} unfinished last lines (never acknowledged)`] : []),
  ];
  return skipped.length === 0 ? '' : `; skipped ${skipped.join(' and ')}`;
}

function ingestCommand(): Command {
  const command = new Command('ingest').description(
    'Load what the callback journal holds into the warehouse (the nightly track run does this too when it starts).',
  );
  return withSettingOptions(command, 'callbacks ingest', SETTINGS)
    .option('--json', 'print the result as JSON')
    .addOption(logLevelOption())
    .addHelpText(
      'after',
      '\nExit codes: 0 loaded; 2 bad input; 4 the warehouse is in use by another process (after waiting 10 s).',
    )
    .action(async (raw: Record<string, unknown>) => {
      const flags = checkFlags(IngestFlagsSchema, raw);
      const logger = createLogger({ level: flags.logLevel });
      const settings = await loadSettings('callbacks ingest', raw, process.env);
      const dbPath = settings.values.warehouse;
      const journalDir = settings.values.callbackJournal;
      const warehouse = await openWarehouseForCommand(dbPath, {}, WAREHOUSE_BUSY_WAIT_MS);
      try {
        const result = await ingestCallbackJournalAsGuest(warehouse, journalDir, {
          spoolDir: dataFolder(defaultDataDir(dbPath)).callbackSpool,
          logger,
        });
        const summary = {
          newEvents: result.newEvents,
          lines: result.lines,
          unreadableLines: result.unreadableLines,
          tornTails: result.tornTails,
          segmentsRemoved: result.segmentsRemoved,
        };
        process.stdout.write(
          flags.json
            ? `${JSON.stringify(summary)}\n`
            : `callbacks loaded from ${journalDir}: ${result.newEvents} new events of ${result.lines} journal lines${skippedNote(result)}\n`,
        );
      } finally {
        await warehouse.close();
      }
    });
}

export function callbacksCommand(): Command {
  return new Command('callbacks')
    .description(
      "Receive the carrier's status callbacks (serve, the default) or load their journal into the warehouse (ingest).",
    )
    .addCommand(serveCommand().exitOverride(), { isDefault: true })
    .addCommand(ingestCommand().exitOverride());
}
