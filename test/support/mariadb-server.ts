import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from './free-port.js';

/** A throwaway MariaDB server on a loopback port, its data in a temporary directory. */
export interface MariadbServer {
  /** `mysql://USER@127.0.0.1:PORT/DATABASE`: no password, as the command line takes it. */
  readonly url: string;
  /** USER's password, which only it has. */
  readonly password: string;
  readonly user: string;
  readonly database: string;
  readonly port: number;
  /** A connection as USER, for the tests' own statements (a table to read, the server's threads). */
  connect(): Promise<mysql.Connection>;
  /** Stops the server and deletes its directory. */
  stop(): Promise<void>;
}

const run = promisify(execFile);
const USER = 'recon';
const DATABASE = 'shop';
const READY_TIMEOUT_MS = 60_000;
/** Small logs and buffers: the tests' tables are small, and so is the machine. */
const SERVER_SETTINGS = ['--innodb-buffer-pool-size=32M', '--innodb-log-file-size=16M', '--skip-log-bin'];

/**
 * Starts a MariaDB server: mariadb-install-db into a temporary directory, then mariadbd on a free port
 * of 127.0.0.1, its socket and temporary files inside that directory, never the system's own service
 * or settings. USER gets a password and DATABASE; root is left only on the socket. Fails loudly when
 * MariaDB is not installed: a test that needs it must never pass without it.
 */
export async function startMariadb(): Promise<MariadbServer> {
  const { server, installDb } = await mariadbBinaries();
  // mariadbd refuses to run as root unless told to.
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  const root = await mkdtemp(join(tmpdir(), 'mariadb-'));
  const data = join(root, 'data');
  const socket = join(root, 'mysqld.sock');
  const log = join(root, 'server.log');
  // Its own folder for temporary tables: servers sharing the system's crash when their names meet.
  const ownTmp = join(root, 'tmp');
  const password = randomBytes(12).toString('hex');
  let child: ChildProcess | undefined;
  try {
    await mkdir(ownTmp);
    await run(installDb, [
      '--no-defaults',
      `--datadir=${data}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--skip-name-resolve',
      `--tmpdir=${ownTmp}`,
      ...asRoot,
      ...SERVER_SETTINGS,
    ]);
    const port = await freePort();
    child = spawn(
      server,
      [
        '--no-defaults',
        `--datadir=${data}`,
        `--socket=${socket}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        '--skip-networking=0',
        '--skip-name-resolve',
        `--pid-file=${join(root, 'mysqld.pid')}`,
        `--log-error=${log}`,
        `--tmpdir=${ownTmp}`,
        ...asRoot,
        ...SERVER_SETTINGS,
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise<void>((resolve) => child?.once('exit', () => resolve()));
    const admin = await connectWhenReady(socket, exited);
    try {
      // Root without a password stays reachable only through the socket in the private directory.
      await admin.query(`DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1'`);
      await admin.query(`CREATE DATABASE ${DATABASE}`);
      await admin.query(`CREATE USER '${USER}'@'%' IDENTIFIED BY '${password}'`);
      await admin.query(`GRANT ALL ON ${DATABASE}.* TO '${USER}'@'%'`);
    } finally {
      await admin.end();
    }
    const running = child;
    return {
      url: `mysql://${USER}@127.0.0.1:${port}/${DATABASE}`,
      password,
      user: USER,
      database: DATABASE,
      port,
      connect: () => mysql.createConnection({ host: '127.0.0.1', port, user: USER, password, database: DATABASE }),
      stop: async () => {
        running.kill('SIGTERM');
        await exited;
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    child?.kill('SIGKILL');
    const serverLog = await readFile(log, 'utf8').catch(() => '(no server log)');
    await rm(root, { recursive: true, force: true });
    throw new Error(`could not start MariaDB: ${error instanceof Error ? error.message : String(error)}\n${serverLog}`);
  }
}

/** Root's connection through the socket, once the server takes connections; fails if the server exits first. */
async function connectWhenReady(socket: string, exited: Promise<void>): Promise<mysql.Connection> {
  let serverExited = false;
  void exited.then(() => {
    serverExited = true;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      return await mysql.createConnection({ socketPath: socket, user: 'root' });
    } catch (error) {
      if (serverExited) throw new Error('mariadbd exited before taking connections');
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** mariadbd (or mysqld) and mariadb-install-db (or mysql_install_db), from the PATH or /usr/sbin and /usr/bin. */
async function mariadbBinaries(): Promise<{ server: string; installDb: string }> {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== ''), '/usr/sbin', '/usr/bin'];
  const find = async (names: string[]): Promise<string | undefined> => {
    for (const dir of dirs)
      for (const name of names) {
        const path = join(dir, name);
        if (
          await access(path).then(
            () => true,
            () => false,
          )
        )
          return path;
      }
    return undefined;
  };
  const server = await find(['mariadbd', 'mysqld']);
  const installDb = await find(['mariadb-install-db', 'mysql_install_db']);
  if (server === undefined || installDb === undefined)
    throw new Error(
      'MariaDB is not installed: no mariadbd and mariadb-install-db in the PATH, /usr/sbin or /usr/bin (apt-get install mariadb-server)',
    );
  return { server, installDb };
}
