import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { CarrierCallbacks } from '../carriers/carrier-callbacks.js';
import { epochMsToInstant } from '../carriers/carrier-time.js';
import { redactDecoded } from '../carriers/client/key-redaction.js';
import type { KeyRing } from '../carriers/client/key-ring.js';
import { Warehouse, type WarehouseOptions } from '../warehouse/warehouse.js';
import { WarehouseBusyError } from '../warehouse/warehouse-errors.js';
import type { CallbackAuthenticator } from './callback-auth.js';
import { callbackEventRecord } from './callback-event.js';
import { JournalWriter } from './callback-journal.js';
import { ingestCallbackJournal, type JournalIngestResult, journalBacklogBytes } from './journal-ingest.js';
import type { JournalSpaceReport } from './journal-space.js';

/** One carrier's callbacks as the receiver takes them: on the carrier's path, checked by `authenticator`. */
export interface CallbackEndpoint {
  /** The carrier's id, the `carrier` of each callback it sends. */
  readonly carrier: string;
  readonly callbacks: CarrierCallbacks;
  readonly authenticator: CallbackAuthenticator;
}

export interface CallbackReceiverOptions {
  readonly host: string;
  readonly port: number;
  /** The first one's answers serve a request on no carrier's path. */
  readonly endpoints: readonly [CallbackEndpoint, ...CallbackEndpoint[]];
  /** The partner's keys, cleared out of every text of a callback before it is journaled or answered. */
  readonly keys?: KeyRing | undefined;
  /** A body past this many bytes is answered 413 and not read further. */
  readonly maxBodyBytes: number;
  readonly journalDir: string;
  readonly segmentBytes: number;
  /** Disk space held back for the journal, given up when the disk fills (see JournalSpace). */
  readonly reserveBytes: number;
  /** Free space under which the journal's disk is reported low. */
  readonly lowSpaceBytes: number;
  readonly dbPath: string;
  readonly warehouse?: WarehouseOptions;
  /** Where the NDJSON handed to DuckDB goes. */
  readonly spoolDir: string;
  /** How often the journal is loaded into the warehouse, when it holds something new. */
  readonly ingestIntervalMs: number;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface LastIngest {
  readonly at: string;
  readonly newEvents: number;
  readonly lines: number;
}

export interface ReceiverHealth {
  /** degraded: the journal's disk is low, its reserve is being spent, or callbacks are refused (see journal.space). */
  readonly status: 'ok' | 'degraded';
  readonly acknowledged: number;
  readonly rejected: Record<string, number>;
  readonly journal: {
    readonly dir: string;
    readonly activeSegment: string;
    readonly backlogBytes: number;
    /** Durable writes (write + fdatasync) since start; each carries every callback that arrived while the one before was under way. */
    readonly writes: number;
    readonly space: JournalSpaceReport;
  };
  readonly warehouse: {
    readonly path: string;
    readonly lastIngest: LastIngest | null;
    /** Since when every attempt found the warehouse held by another process (the nightly run), or null. */
    readonly busySince: string | null;
    readonly lastError: string | null;
  };
}

export interface RunningReceiver {
  readonly url: string;
  health(): Promise<ReceiverHealth>;
  /** Stops accepting, finishes the requests under way, closes the journal and loads it when the warehouse is free. */
  stop(): Promise<{ drained: boolean; backlogBytes: number }>;
}

class Rejection extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function answer(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** When to send a refused callback again, in seconds: room may return at any moment (a carrier may keep its own pace). */
const RETRY_AFTER_SECONDS = '5';

/**
 * Past the size cap a body is not kept; what the client still sends of it is read and dropped up to
 * this many bytes, so the client can finish sending and read the 413 on a connection that stays
 * usable. A client sending more loses the connection.
 */
const DISCARD_LIMIT_BYTES = 1024 * 1024;

/** The body, or a 413 Rejection as soon as it passes `maxBytes` (nothing more is kept). */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.reject(
      new Rejection(
        413,
        `body of ${declared} bytes is over the limit of ${maxBytes}`,
        declared > DISCARD_LIMIT_BYTES ? { connection: 'close' } : {},
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        reject(new Rejection(413, `body is over the limit of ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    // A client that goes away mid-body: no answer reaches it, but the request must end (shutdown waits for it).
    const cutOff = () => reject(new Rejection(400, 'the request was cut off before its body ended'));
    req.once('error', cutOff);
    req.once('close', () => {
      if (!req.complete) cutOff();
    });
  });
}

/** Reads and drops what the client still sends of a body over the cap, up to DISCARD_LIMIT_BYTES; past that, or when `closeNow`, the connection goes. */
function dropRestOfBody(req: IncomingMessage, res: ServerResponse, closeNow: boolean): void {
  if (closeNow) {
    res.once('finish', () => req.destroy());
    return;
  }
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_LIMIT_BYTES) req.destroy();
  });
  req.resume();
}

/** Why a callback was refused for its credential, with the header that asks for one. */
function unauthorized(authenticator: CallbackAuthenticator): Rejection {
  switch (authenticator.method) {
    case 'basic':
      return new Rejection(401, 'wrong or missing HTTP Basic credentials', {
        'www-authenticate': 'Basic realm="parcel-recon"',
      });
    case 'token':
      return new Rejection(401, "wrong or missing token in the address's query");
    case 'apikey':
      return new Rejection(401, 'wrong or missing ApiKey');
  }
}

/**
 * Each carrier's status callback endpoint, on its own path (247Express's `POST /IntergrationAPI`,
 * GHN's `POST /ghn/webhook`): authenticated, validated with the carrier's contract, each accepted
 * event journaled to disk with its carrier before it is acknowledged; the journal is loaded into the
 * warehouse every `ingestIntervalMs` when the warehouse is free (the nightly run may hold it: then the
 * receiver just keeps journaling). `GET /health` reports the backlog and the last load.
 */
export async function startCallbackReceiver(options: CallbackReceiverOptions): Promise<RunningReceiver> {
  const { logger, endpoints } = options;
  const journal = await JournalWriter.open(options.journalDir, {
    segmentBytes: options.segmentBytes,
    reserveBytes: options.reserveBytes,
    lowSpaceBytes: options.lowSpaceBytes,
    logger,
  });
  let acknowledged = 0;
  const rejected: Record<string, number> = {};
  let offsets: ReadonlyMap<string, number> = new Map();
  let lastIngest: LastIngest | null = null;
  let busySince: string | null = null;
  let lastError: string | null = null;
  let linesAtLastIngest = -1;
  let ingesting: Promise<void> | undefined;
  const inFlight = new Set<Promise<void>>();
  const paths = endpoints.map((endpoint) => `POST ${endpoint.callbacks.path}`).join(' or ');

  async function accept(req: IncomingMessage, endpoint: CallbackEndpoint, query: URLSearchParams): Promise<void> {
    const { authenticator, callbacks } = endpoint;
    const contentType = req.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(contentType))
      throw new Rejection(
        415,
        `Content-Type must be application/json, not ${JSON.stringify(contentType.slice(0, 60))}`,
      );
    const authorization = req.headers.authorization;
    const urlToken = query.get('token') ?? undefined;
    // A credential outside the body is checked before the body is read.
    let identity =
      authenticator.method === 'apikey'
        ? undefined
        : authenticator.authenticate({ authorization, urlToken, bodyKey: undefined });
    if (authenticator.method !== 'apikey' && identity === undefined) throw unauthorized(authenticator);
    const body = await readBody(req, options.maxBodyBytes);
    let raw: unknown;
    try {
      raw = JSON.parse(body.toString('utf8'));
    } catch (error) {
      throw new Rejection(400, `body is not JSON: ${(error as Error).message.split('\n', 1)[0]}`);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new Rejection(400, 'body is not a JSON object');
    const fields = raw as Record<string, unknown>;
    const credentialField = callbacks.credential.kind === 'body-key' ? callbacks.credential.field : undefined;
    identity ??= authenticator.authenticate({
      authorization,
      urlToken,
      bodyKey: credentialField === undefined ? undefined : fields[credentialField],
    });
    if (identity === undefined) throw unauthorized(authenticator);
    const kept = options.keys === undefined ? fields : (redactDecoded(fields, options.keys) as Record<string, unknown>);
    const parsed = callbacks.parse(kept);
    if (!parsed.ok) throw new Rejection(400, parsed.message);
    const record = callbackEventRecord(
      endpoint.carrier,
      parsed.value,
      { body: kept, credentialField },
      identity,
      epochMsToInstant(options.now()),
    );
    try {
      await journal.append(JSON.stringify(record));
    } catch {
      // The journal logs the cause, once per refusal: not once per request of a flood.
      throw new Rejection(503, 'the callback could not be made durable; send it again', {
        'retry-after': RETRY_AFTER_SECONDS,
      });
    }
    acknowledged++;
    logger.debug(
      {
        carrier: record.carrier,
        eventId: record.eventId,
        orderCode: record.orderCode,
        status: record.status,
        account: record.accountAlias,
      },
      'callback journaled',
    );
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const queryText = queryAt === -1 ? '' : url.slice(queryAt + 1);
    if (req.method === 'GET' && path === '/health') return answer(res, 200, JSON.stringify(await health()));
    const endpoint = endpoints.find((candidate) => candidate.callbacks.path === path);
    const callbacks = (endpoint ?? endpoints[0]).callbacks;
    try {
      if (endpoint === undefined)
        throw new Rejection(404, `no such path: ${path.slice(0, 80)} (callbacks go to ${paths})`);
      if (req.method !== 'POST')
        throw new Rejection(405, `method ${req.method} not allowed: POST ${path}`, { allow: 'POST' });
      await accept(req, endpoint, new URLSearchParams(queryText));
      answer(res, 200, callbacks.answer(200));
    } catch (error) {
      if (!(error instanceof Rejection)) logger.error({ error: (error as Error).message }, 'callback handling failed');
      const rejection =
        error instanceof Rejection ? error : new Rejection(500, 'the callback could not be handled; send it again');
      rejected[rejection.status] = (rejected[rejection.status] ?? 0) + 1;
      // The path only: the address's query may carry a token.
      if (rejection.status !== 503)
        logger.info({ status: rejection.status, reason: rejection.message, path }, 'callback rejected');
      answer(res, rejection.status, callbacks.answer(rejection.status, rejection.message), rejection.headers);
      if (rejection.status === 413) dropRestOfBody(req, res, rejection.headers.connection === 'close');
    }
  }

  async function ingestOnce(isSealed: (segment: string) => boolean): Promise<boolean> {
    const lines = journal.appendedLines;
    let warehouse: Warehouse;
    try {
      warehouse = await Warehouse.open(options.dbPath, options.warehouse);
    } catch (error) {
      if (error instanceof WarehouseBusyError) {
        busySince ??= new Date().toISOString();
        logger.debug({ db: options.dbPath }, 'warehouse busy: callbacks stay journaled');
      } else {
        lastError = (error as Error).message;
        logger.warn({ db: options.dbPath, error: lastError }, 'cannot open the warehouse: callbacks stay journaled');
      }
      return false;
    }
    let result: JournalIngestResult;
    try {
      result = await ingestCallbackJournal(warehouse, options.journalDir, {
        spoolDir: options.spoolDir,
        logger,
        isSealed,
      });
    } catch (error) {
      lastError = (error as Error).message;
      logger.error({ error: lastError }, 'loading the callback journal failed: it stays journaled');
      return false;
    } finally {
      await warehouse.close();
    }
    offsets = result.offsets;
    linesAtLastIngest = lines;
    busySince = null;
    lastError = null;
    lastIngest = { at: new Date().toISOString(), newEvents: result.newEvents, lines: result.lines };
    if (result.lines > 0)
      logger.info(
        { newEvents: result.newEvents, lines: result.lines, segmentsRemoved: result.segmentsRemoved },
        'callbacks loaded into the warehouse',
      );
    return true;
  }

  /** One load, unless one is under way or nothing was journaled since the last. */
  function ingestIfDue(): Promise<void> {
    if (ingesting !== undefined || linesAtLastIngest === journal.appendedLines) return ingesting ?? Promise.resolve();
    ingesting = ingestOnce((segment) => journal.isSealed(segment))
      .then(() => undefined)
      .finally(() => (ingesting = undefined));
    return ingesting;
  }

  async function health(): Promise<ReceiverHealth> {
    const space = journal.spaceReport();
    return {
      status: space.state === 'ok' ? 'ok' : 'degraded',
      acknowledged,
      rejected: { ...rejected },
      journal: {
        dir: options.journalDir,
        activeSegment: journal.activeSegment,
        backlogBytes: await journalBacklogBytes(options.journalDir, offsets),
        writes: journal.durableWrites,
        space,
      },
      warehouse: { path: options.dbPath, lastIngest, busySince, lastError },
    };
  }

  const server: Server = createServer((req, res) => {
    const work = handle(req, res).catch((error: unknown) =>
      logger.error({ error: (error as Error).message }, 'request broke'),
    );
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;

  // What earlier receivers left is loaded first; then the journal is loaded as it grows.
  void ingestIfDue();
  const timer = setInterval(() => void ingestIfDue(), options.ingestIntervalMs);
  timer.unref();

  return {
    url,
    health,
    async stop() {
      clearInterval(timer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      server.closeAllConnections();
      await closed;
      await ingesting;
      await journal.close();
      const drained = await ingestOnce((segment) => journal.isSealed(segment));
      const backlogBytes = await journalBacklogBytes(options.journalDir, offsets);
      return { drained: drained && backlogBytes === 0, backlogBytes };
    },
  };
}
