import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

/** A throwaway redis-server on a loopback port, its data (an append-only file) in a temporary directory. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** A client for the test's own reads (ledger counts, FLUSHALL). */
  readonly client: Redis;
  /** Stops the server (SHUTDOWN: the append-only file is written) and starts it again on the same port and directory. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts redis-server with append-only persistence fsynced on every write, as the README asks of a
 * shared quota's Redis, asking clients for `password` when one is given. Fails loudly when
 * redis-server is not installed: a test needing it never passes without it.
 */
export async function startRedis(options: { readonly password?: string } = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'yes',
    '--appendfsync',
    'always',
    '--daemonize',
    'no',
    ...(options.password === undefined ? [] : ['--requirepass', options.password]),
  ];
  let server = await launch(args, port, options.password);
  const client = new Redis({
    port,
    host: '127.0.0.1',
    password: options.password,
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => (times > 50 ? null : 100),
  });
  client.on('error', () => undefined);
  await client.connect();
  const shutdown = async () => {
    const ended = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await ended;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    client,
    restart: async () => {
      await shutdown();
      server = await launch(args, port, options.password);
    },
    stop: async () => {
      client.disconnect();
      await shutdown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function launch(args: string[], port: number, password: string | undefined): Promise<ChildProcess> {
  const server = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const failed = new Promise<never>((_, reject) => {
    server.once('error', (error) =>
      reject(new Error(`redis-server is not installed or did not start: ${error.message}`)),
    );
    server.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  failed.catch(() => undefined);
  const deadline = performance.now() + 15_000;
  for (;;) {
    const probe = new Redis({
      port,
      host: '127.0.0.1',
      password,
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    probe.on('error', () => undefined);
    const ready = await Promise.race([
      probe
        .connect()
        .then(() => probe.ping())
        .then(
          () => true,
          () => false,
        ),
      failed,
    ]);
    probe.disconnect();
    if (ready) return server;
    if (performance.now() > deadline) throw new Error(`redis-server did not answer on port ${port}: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
