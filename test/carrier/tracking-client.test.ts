import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TrackingClient } from '../../src/carrier/client/tracking-client.js';

let server: Server | undefined;
let client: TrackingClient | undefined;
afterEach(async () => {
  await client?.close();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = client = undefined;
});

/** A carrier on loopback that answers every lookup with `body`. */
async function carrierAnswering(body: Buffer): Promise<string> {
  server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(body),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('TrackingClient', () => {
  it('hands on the body as UTF-8 bytes that agree with the text it read, even when the carrier sends a byte order mark and bytes that are not UTF-8', async () => {
    // "Không" with its ô in Latin-1 (0xF4), as a misconfigured server might send it.
    const sent = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"errorCode":"ORDERCODE_NOT_FOUND","errorMessage":"Kh'),
      Buffer.from([0xf4]),
      Buffer.from('ng tìm thấy","orderCode":"247EXP0001"}'),
    ]);
    client = new TrackingClient({ trackingUrl: await carrierAnswering(sent), timeoutMs: 5_000, connections: 1 });

    const answer = await client.lookup('test-key', '247EXP0001');

    expect(answer.kind).toBe('carrier_error');
    if (answer.kind !== 'carrier_error') return;
    expect(answer.error.errorMessage).toBe('Kh\ufffdng tìm thấy');
    expect(isUtf8(answer.body)).toBe(true);
    expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({ errorMessage: 'Kh\ufffdng tìm thấy' });
  });

  it('hands on UTF-8 bytes as they came', async () => {
    const sent = Buffer.from(
      '{"errorCode":"ORDERCODE_NOT_FOUND", "errorMessage":"Không tìm thấy","orderCode":"247EXP0001"}',
    );
    client = new TrackingClient({ trackingUrl: await carrierAnswering(sent), timeoutMs: 5_000, connections: 1 });
    const answer = await client.lookup('test-key', '247EXP0001');
    expect(answer.body.equals(sent)).toBe(true);
  });
});
