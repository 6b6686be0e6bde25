import { createServer } from 'node:net';

/** A port of 127.0.0.1 nobody listens on, found by letting the system pick one. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free loopback port');
  return address.port;
}
