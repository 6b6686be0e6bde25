import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EXPRESS_247 } from '../../src/carriers/247express/carrier.js';
import { DefinedCarrierTracker } from '../../src/carriers/client/carrier-tracker.js';
import type { TransportOptions } from '../../src/carriers/client/carrier-transport.js';
import { KeyRing } from '../../src/carriers/client/key-ring.js';
import { AnswerTooLargeFailure, LookupFailure } from '../../src/carriers/client/lookup-failures.js';
import { freePort } from '../support/free-port.js';

let server: Server | undefined;
let client: DefinedCarrierTracker | undefined;
afterEach(async () => {
  await client?.close();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = client = undefined;
});

const KEY = 'tk-5f0c2a9e-41b7-4d1e-9a63-0c2f8e7b1d44';
const OTHER_KEY = 'tk-0b8e6d2c-7a51-4f39-8c1e-5d9a2b4f6e03';
const keys = new KeyRing([
  ['hanoi-shop', KEY],
  ['saigon-shop', OTHER_KEY],
]);

/** A carrier on loopback that answers every lookup with `body`. */
async function carrierAnswering(body: Buffer): Promise<string> {
  return carrierServing((response) => response.writeHead(200, { 'content-type': 'application/json' }).end(body));
}

async function carrierServing(answer: (response: ServerResponse) => void): Promise<string> {
  server = createServer((_request, response) => answer(response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function trackingClient(trackingUrl: string, options: Partial<TransportOptions> = {}): DefinedCarrierTracker {
  return new DefinedCarrierTracker(
    EXPRESS_247,
    { trackingUrl, timeoutMs: 5_000, maxAnswerBytes: 1_048_576, connections: 1, ...options },
    keys,
  );
}

/** Streams `total` bytes of a JSON string in 64 KB chunks as the client reads them, counting what was written. */
function streamedBody(total: number, withLength: boolean, written: { bytes: number }) {
  return (response: ServerResponse) => {
    response.writeHead(200, {
      'content-type': 'application/json',
      ...(withLength ? { 'content-length': String(total) } : {}),
    });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    response.write('{"x":"');
    written.bytes = 6;
    const more = () => {
      while (written.bytes < total - 2 && !response.destroyed) {
        const piece = chunk.subarray(0, Math.min(chunk.length, total - 2 - written.bytes));
        written.bytes += piece.length;
        if (!response.write(piece)) return void response.once('drain', more);
      }
      response.end('"}');
    };
    response.on('error', () => {});
    more();
  };
}

describe("247Express's tracking lookup over HTTP", () => {
  it('hands on the body as UTF-8 bytes that agree with the text it read, even when the carrier sends a byte order mark and bytes that are not UTF-8', async () => {
    // "Không" with its ô in Latin-1 (0xF4), as a misconfigured server might send it.
    const sent = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"errorCode":"ORDERCODE_NOT_FOUND","errorMessage":"Kh'),
      Buffer.from([0xf4]),
      Buffer.from('ng tìm thấy","orderCode":"247EXP0001"}'),
    ]);
    client = trackingClient(await carrierAnswering(sent));

    const answer = await client.lookup('hanoi-shop', '247EXP0001');

    expect(answer.kind).toBe('carrier_error');
    if (answer.kind !== 'carrier_error') return;
    expect(answer.errorMessage).toBe('Kh\ufffdng tìm thấy');
    expect(isUtf8(answer.body)).toBe(true);
    expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({ errorMessage: 'Kh\ufffdng tìm thấy' });
  });

  it('hands on UTF-8 bytes as they came', async () => {
    const sent = Buffer.from(
      '{"errorCode":"ORDERCODE_NOT_FOUND", "errorMessage":"Không tìm thấy","orderCode":"247EXP0001"}',
    );
    client = trackingClient(await carrierAnswering(sent));
    const answer = await client.lookup('hanoi-shop', '247EXP0001');
    expect(answer.body.equals(sent)).toBe(true);
  });

  it.each([
    ['a Content-Length', true],
    ['no Content-Length', false],
  ])(
    'stops reading an answer over the limit with %s and fails with LOOKUP_TOO_LARGE, not retried',
    async (_name, withLength) => {
      const written = { bytes: 0 };
      const total = 64 * 1024 * 1024;
      client = trackingClient(await carrierServing(streamedBody(total, withLength, written)), {
        maxAnswerBytes: 100_000,
      });

      const failure = await client.lookup('hanoi-shop', '247EXP0001').catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(AnswerTooLargeFailure);
      expect(failure).toMatchObject({ code: 'LOOKUP_TOO_LARGE', retryable: false });
      // The connection is gone: the server could not write the rest.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(written.bytes).toBeLessThan(total / 4);
    },
  );

  it('reads an answer of exactly the limit', async () => {
    const sent = Buffer.from('{"errorCode":"ORDERCODE_NOT_FOUND","errorMessage":"x","orderCode":"247EXP0001"}');
    client = trackingClient(await carrierAnswering(sent), { maxAnswerBytes: sent.length });
    await expect(client.lookup('hanoi-shop', '247EXP0001')).resolves.toMatchObject({ kind: 'carrier_error' });
  });

  it('clears every configured key out of the answer, as written and spelled with escapes, in the error and in the body', async () => {
    const escaped = [...OTHER_KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const sent = Buffer.from(
      `{"errorCode":"APIKEY_NOT_FOUND","errorMessage":"Apikey ${KEY} not found; try ${escaped}","orderCode":"247EXP0001"}`,
    );
    client = trackingClient(await carrierAnswering(sent));

    const answer = await client.lookup('hanoi-shop', '247EXP0001');

    expect(answer.kind).toBe('carrier_error');
    if (answer.kind !== 'carrier_error') return;
    expect(answer.errorMessage).toBe('Apikey [redacted] not found; try [redacted]');
    const body = answer.body.toString('utf8');
    expect(body).not.toContain(KEY);
    expect(JSON.stringify(JSON.parse(body))).not.toContain(OTHER_KEY);
    expect(JSON.parse(body)).toMatchObject({ errorMessage: 'Apikey [redacted] not found; try [redacted]' });
  });
});

describe('what a failed lookup tells of the carrier', () => {
  /** The failure a lookup throws. */
  async function failureOf(url: string, options: Partial<TransportOptions> = {}): Promise<LookupFailure> {
    client = trackingClient(url, options);
    const failure = await client.lookup('hanoi-shop', 'EX100000001').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(LookupFailure);
    return failure as LookupFailure;
  }

  it('a refused connection was never sent, and got no answer', async () => {
    const failure = await failureOf(`http://127.0.0.1:${await freePort()}`);
    expect(failure).toMatchObject({ code: 'LOOKUP_CONNECTION', sent: false, answered: false });
    expect(failure.message).toBe('could not connect to the carrier: ECONNREFUSED');
  });

  it('a TLS handshake that fails was never sent', async () => {
    // A plain HTTP server: the client's TLS handshake fails before any request is written.
    const url = await carrierAnswering(Buffer.from('{}'));
    const failure = await failureOf(url.replace('http:', 'https:'));
    expect(failure).toMatchObject({ code: 'LOOKUP_CONNECTION', sent: false, answered: false });
  });

  it('a connection reset once the request was written was sent, and got no answer', async () => {
    let requests = 0;
    const url = await carrierServing((response) => {
      requests++;
      response.socket?.destroy();
    });
    const failure = await failureOf(url);
    expect(requests).toBe(1);
    expect(failure).toMatchObject({ code: 'LOOKUP_CONNECTION', sent: true, answered: false });
    expect(failure.message).toMatch(/^connection to the carrier failed: /);
  });

  it('a request that times out was sent, and got no answer', async () => {
    const url = await carrierServing(() => undefined);
    const failure = await failureOf(url, { timeoutMs: 100 });
    expect(failure).toMatchObject({ code: 'LOOKUP_TIMEOUT', sent: true, answered: false });
  });

  it.each([
    [503, false],
    [500, false],
    [404, true],
    [429, true],
  ])('an HTTP %i was sent; the carrier answered: %s', async (status, answered) => {
    const url = await carrierServing((response) => response.writeHead(status).end());
    const failure = await failureOf(url);
    expect(failure).toMatchObject({ sent: true, answered });
  });
});
