import type Cursor from 'pg-cursor';
import { maskedOneLineMessage } from './masked-message.js';
import { type OrderCodeSource, SourceError } from './order-code-source.js';
import { queryForDescription } from './query-description.js';
import { orderCodeItems, type QueryRow } from './source-rows.js';

export interface PostgresSourceOptions {
  /** Rows fetched from the server-side cursor at a time (default 5000). */
  readonly batchSize?: number;
}

const DEFAULT_BATCH_SIZE = 5000;
const CONNECT_TIMEOUT_MS = 15_000;
/** Every value as PostgreSQL writes it as text: a date, a numeric or a UUID keeps its own spelling. */
const VALUES_AS_TEXT = { getTypeParser: () => (text: string) => text };

/** Where a URL points, to name it in messages, and the password those messages must never show. */
interface PostgresServer {
  /** `user@host:port/database` */
  readonly name: string;
  readonly password: string;
}

/**
 * Order codes from a query on a PostgreSQL server (`postgres://user:password@host:port/database`),
 * read through a server-side cursor in batches. The result needs an `order_code` column and may have
 * `account`. Neither the description nor any message shows the password.
 */
export function postgresSource(url: string, query: string, options: PostgresSourceOptions = {}): OrderCodeSource {
  const server = serverOf(url);
  return {
    description: `${describePostgres(url)}: ${queryForDescription(query)}`,
    items: () =>
      orderCodeItems('the PostgreSQL query', (check) =>
        postgresQueryRows(url, server, query, options.batchSize ?? DEFAULT_BATCH_SIZE, check),
      ),
  };
}

/**
 * The rows of a query on a PostgreSQL server, every value as PostgreSQL writes it as text, read
 * through a server-side cursor in batches. `checkColumns` sees the column names before any row.
 * Failures are SourceErrors that never show the password.
 */
export function postgresRows(
  url: string,
  query: string,
  checkColumns?: (names: readonly string[]) => void,
): AsyncGenerator<QueryRow> {
  return postgresQueryRows(url, serverOf(url), query, DEFAULT_BATCH_SIZE, checkColumns);
}

/** `postgres:user@host:port/db`, never the password. */
export function describePostgres(url: string): string {
  return `postgres:${serverOf(url)?.name ?? '(invalid URL)'}`;
}

async function* postgresQueryRows(
  url: string,
  server: PostgresServer | null,
  query: string,
  batchSize: number,
  checkColumns?: (names: readonly string[]) => void,
): AsyncGenerator<QueryRow> {
  if (server === null)
    throw new SourceError('not a PostgreSQL URL: expected postgres://user:password@host:port/database');
  // Loaded only when a source is PostgreSQL, so that every other run does without its memory.
  const [{ default: pg }, { default: PgCursor }] = await Promise.all([import('pg'), import('pg-cursor')]);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A connection lost between batches also fails the next read, which reports it; without a listener
  // the client's 'error' event would end the process.
  client.on('error', () => {});
  try {
    try {
      await client.connect();
    } catch (error) {
      throw new SourceError(
        `cannot connect to PostgreSQL at ${server.name}: ${maskedOneLineMessage(error, [server.password])}`,
      );
    }
    const cursor = client.query(new PgCursor<unknown[]>(query, [], { rowMode: 'array', types: VALUES_AS_TEXT }));
    let checked = false;
    let row = 0;
    for (;;) {
      const batch = await readBatch(cursor, batchSize, server.password);
      if (!checked) checkColumns?.(batch.columnNames);
      checked = true;
      for (const values of batch.rows) {
        row++;
        yield { columnNames: batch.columnNames, values, origin: `postgres row ${row}`, line: row };
      }
      // The server sends a short batch only when the query is done.
      if (batch.rows.length < batchSize) break;
    }
  } finally {
    // Ending the client ends its server connection, and with it the cursor, whether or not it was read through.
    await client.end().catch(() => {});
  }
}

async function readBatch(
  cursor: Cursor<unknown[]>,
  batchSize: number,
  password: string,
): Promise<{ rows: unknown[][]; columnNames: string[] }> {
  return new Promise((resolve, reject) => {
    cursor.read(batchSize, (error, rows, result) => {
      if (error) reject(new SourceError(`PostgreSQL query failed: ${maskedOneLineMessage(error, [password])}`));
      else resolve({ rows, columnNames: result.fields.map((field) => field.name) });
    });
  });
}

function serverOf(url: string): PostgresServer | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') return null;
  const user = decodeURIComponent(parsed.username);
  const host = decodeURIComponent(parsed.hostname) || (parsed.searchParams.get('host') ?? 'localhost');
  const database = decodeURIComponent(parsed.pathname.slice(1)) || user;
  return {
    name: `${user === '' ? '' : `${user}@`}${host}:${parsed.port || '5432'}/${database}`,
    password: decodeURIComponent(parsed.password),
  };
}
