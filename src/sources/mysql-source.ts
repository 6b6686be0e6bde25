import type { Duplex } from 'node:stream';
import type { Connection, FieldPacket, TypeCast } from 'mysql2';
import { maskedOneLineMessage } from './masked-message.js';
import { type OrderCodeSource, SourceError } from './order-code-source.js';
import { queryForDescription } from './query-description.js';
import { orderCodeItems, type QueryRow } from './source-rows.js';

export interface MysqlSourceOptions {
  /** The password when the URL holds none (the command line takes it from MYSQL_PWD or a private file). */
  readonly password?: string;
  /** Rows read ahead of the consumer; past them the connection stops reading from the server (default 1000). */
  readonly readAhead?: number;
}

const DEFAULT_READ_AHEAD = 1000;
const CONNECT_TIMEOUT_MS = 15_000;
const DEFAULT_PORT = '3306';

/**
 * Every value as the server writes it as text, decoded as UTF-8 (the connection's character set):
 * a BIGINT past 2^53, a DECIMAL or a date keeps its own spelling, as the PostgreSQL source gives them.
 */
const VALUES_AS_TEXT: TypeCast = (field) => field.string('utf8');

/** Where a URL points, to name it in messages, and the password those messages must never show. */
interface MysqlServer {
  /** `user@host:port/database` */
  readonly name: string;
  readonly password: string;
}

/**
 * Order codes from a query on a MySQL or MariaDB server (`mysql://user@host:port/database`), its
 * result streamed: the connection stops reading while the consumer is behind, so no more than a few
 * rows are held however large the result. The result needs an `order_code` column and may have
 * `account`. Neither the description nor any message shows the password.
 */
export function mysqlSource(url: string, query: string, options: MysqlSourceOptions = {}): OrderCodeSource {
  const server = serverOf(url);
  return {
    description: `${describeMysql(url)}: ${queryForDescription(query)}`,
    items: () => orderCodeItems('the MySQL query', (check) => mysqlQueryRows(url, server, query, options, check)),
  };
}

/** `mysql:user@host:port/db`, never the password. */
export function describeMysql(url: string): string {
  return `mysql:${serverOf(url)?.name ?? '(invalid URL)'}`;
}

/**
 * The rows of a query on a MySQL or MariaDB server, every value as the server writes it as text,
 * streamed (the connection stops reading while the consumer is behind). `checkColumns` sees the
 * column names before any row. Failures are SourceErrors that never show the password.
 */
export function mysqlRows(
  url: string,
  query: string,
  options: MysqlSourceOptions = {},
  checkColumns?: (names: readonly string[]) => void,
): AsyncGenerator<QueryRow> {
  return mysqlQueryRows(url, serverOf(url), query, options, checkColumns);
}

async function* mysqlQueryRows(
  url: string,
  server: MysqlServer | null,
  query: string,
  options: MysqlSourceOptions,
  checkColumns?: (names: readonly string[]) => void,
): AsyncGenerator<QueryRow> {
  if (server === null) throw new SourceError('not a MySQL URL: expected mysql://user@host:port/database');
  const password = server.password === '' ? (options.password ?? '') : server.password;
  const secrets = [server.password, options.password ?? ''];
  // Loaded only when a source is MySQL, so that every other run does without its memory.
  const { default: mysql } = await import('mysql2');
  const connection = mysql.createConnection({
    uri: url,
    password: password === '' ? undefined : password,
    connectTimeout: CONNECT_TIMEOUT_MS,
    rowsAsArray: true,
    typeCast: VALUES_AS_TEXT,
  });
  // A connection lost while rows are read also fails the query, which reports it; without a listener
  // the connection's 'error' event would end the process.
  connection.on('error', () => {});
  let readThrough = false;
  try {
    await connect(connection, server.name, secrets);
    const result = connection.query(query);
    let columnNames: string[] | null = null;
    // A statement's status comes with no fields.
    result.on('fields', (fields: FieldPacket[] | undefined) => {
      columnNames = fields?.map((field) => field.name) ?? null;
    });
    let checked = false;
    let row = 0;
    const rows = result.stream({ highWaterMark: options.readAhead ?? DEFAULT_READ_AHEAD });
    try {
      for await (const values of rows) {
        // A statement that returns no rows ends with its status, which is no row.
        if (!Array.isArray(values)) continue;
        const names: readonly string[] = columnNames ?? [];
        if (!checked) checkColumns?.(names);
        checked = true;
        row++;
        yield { columnNames: names, values, origin: `mysql row ${row}`, line: row };
      }
    } catch (error) {
      if (error instanceof SourceError) throw error;
      throw new SourceError(`MySQL query failed: ${maskedOneLineMessage(error, secrets)}`);
    }
    if (!checked) checkColumns?.(columnNames ?? []);
    readThrough = true;
  } finally {
    await close(connection, readThrough);
  }
}

async function connect(connection: Connection, serverName: string, secrets: readonly string[]): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve())));
  } catch (error) {
    throw new SourceError(`cannot connect to MySQL at ${serverName}: ${maskedOneLineMessage(error, secrets)}`);
  }
}

/**
 * Says goodbye to the server after a result read through. Otherwise rows may still be coming:
 * mysql2's own destroy() only ends the client's half of the socket and the server would go on
 * sending the rest of the result, so the socket itself is destroyed, which ends the query.
 */
async function close(connection: Connection, readThrough: boolean): Promise<void> {
  if (readThrough) {
    await new Promise<void>((resolve) => connection.end(() => resolve()));
    return;
  }
  (connection as unknown as { stream: Duplex }).stream.destroy();
}

function serverOf(url: string): MysqlServer | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') return null;
  const user = decodeURIComponent(parsed.username);
  const host = decodeURIComponent(parsed.hostname) || 'localhost';
  const database = decodeURIComponent(parsed.pathname.slice(1));
  return {
    name: `${user === '' ? '' : `${user}@`}${host}:${parsed.port || DEFAULT_PORT}/${database}`,
    password: decodeURIComponent(parsed.password),
  };
}
