import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

/** A throwaway PostgreSQL server on a loopback port, its data in a temporary directory. */
export interface PostgresServer {
  /** `postgres://USER:PASSWORD@127.0.0.1:PORT/postgres` */
  readonly url: string;
  readonly user: string;
  readonly password: string;
  readonly port: number;
  /** Stops the server and deletes its directory. */
  stop(): Promise<void>;
}

const run = promisify(execFile);
const USER = 'recon';
/** The account PostgreSQL runs as when the tests run as root, which it refuses. */
const SERVER_ACCOUNT = 'postgres';

/**
 * Starts a PostgreSQL server: initdb with a password (scram-sha-256) for USER, then pg_ctl on a free
 * port of 127.0.0.1, its unix socket inside the temporary directory. Fails loudly when PostgreSQL is
 * not installed: a test that needs it must never pass without it.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = await postgresBinaries();
  const asRoot = process.getuid?.() === 0;
  const root = await mkdtemp(join(tmpdir(), 'pg-'));
  const data = join(root, 'data');
  const log = join(root, 'server.log');
  const passwordFile = join(root, 'password');
  const password = randomBytes(12).toString('hex');
  const postgres = (command: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', SERVER_ACCOUNT, '--', join(bin, command), ...args]) : run(join(bin, command), args);
  try {
    await writeFile(passwordFile, `${password}\n`);
    if (asRoot) await run('chown', ['-R', `${SERVER_ACCOUNT}:`, root]);
    await postgres('initdb', [
      '-D',
      data,
      '-U',
      USER,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    const port = await freePort();
    const serverOptions = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off`;
    await postgres('pg_ctl', ['-D', data, '-l', log, '-o', serverOptions, '-w', '-t', '60', 'start']);
    return {
      url: `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`,
      user: USER,
      password,
      port,
      stop: async () => {
        await postgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    const serverLog = await readFile(log, 'utf8').catch(() => '(no server log)');
    await rm(root, { recursive: true, force: true });
    throw new Error(
      `could not start PostgreSQL: ${error instanceof Error ? error.message : String(error)}\n${serverLog}`,
    );
  }
}

/** The directory of initdb and pg_ctl: pg_config's bindir, else the PATH, else Debian's versioned ones. */
async function postgresBinaries(): Promise<string> {
  const fromPgConfig = await run('pg_config', ['--bindir']).then(
    ({ stdout }) => [stdout.trim()],
    () => [],
  );
  const fromPath = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  const debian = await readdir('/usr/lib/postgresql').then(
    (versions) =>
      versions.sort((a, b) => Number(b) - Number(a)).map((version) => join('/usr/lib/postgresql', version, 'bin')),
    () => [],
  );
  for (const dir of [...fromPgConfig, ...fromPath, ...debian]) {
    const found = await Promise.all(
      ['initdb', 'pg_ctl'].map((command) =>
        access(join(dir, command)).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (found.every(Boolean)) return dir;
  }
  throw new Error(
    'PostgreSQL is not installed: no initdb and pg_ctl in pg_config --bindir, the PATH or /usr/lib/postgresql/*/bin',
  );
}
