import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CustomerOperationsClient } from '../../src/carriers/247express/client/customer-operations-client.js';
import type { PriceRequest } from '../../src/carriers/247express/contract.js';
import { KeyRing } from '../../src/carriers/client/key-ring.js';

const KEY = 'co-3d9f1b7a-62e4-4c08-b5a1-9e7c2d4f8a16';
const OTHER_KEY = 'co-8a2e5c1f-0d7b-4e93-a6f4-1b3c9d5e7f20';
const keys = new KeyRing([
  ['hanoi-shop', KEY],
  ['saigon-shop', OTHER_KEY],
]);
const MAX_ANSWER_BYTES = 100_000;

let server: Server | undefined;
let client: CustomerOperationsClient | undefined;
afterEach(async () => {
  await client?.close();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = client = undefined;
});

/** The customer operations on loopback; a client of them with a 100 KB answer limit. */
async function clientOf(answer: (response: ServerResponse) => void): Promise<CustomerOperationsClient> {
  server = createServer((_request, response) => answer(response));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  client = new CustomerOperationsClient(
    {
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      authHeader: 'ApiKey',
      timeoutMs: 5_000,
      maxAnswerBytes: MAX_ANSWER_BYTES,
      connections: 1,
    },
    keys,
  );
  return client;
}

function json(body: unknown) {
  return (response: ServerResponse) =>
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A 64 MB JSON body streamed without a Content-Length, counting what was written before the client left. */
function endlessBody(written: { bytes: number }) {
  return (response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.on('error', () => {});
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    response.write('{"ErrorMessage":"');
    const more = () => {
      while (written.bytes < 64 * 1024 * 1024 && !response.destroyed) {
        written.bytes += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', more);
      }
      response.end('"}');
    };
    more();
  };
}

const request = { FromProvinceName: 'Hà Nội' } as unknown as PriceRequest;

describe('CustomerOperationsClient', () => {
  it.each([
    ['price', (c: CustomerOperationsClient) => c.quotePrice(KEY, request)],
    ['images', (c: CustomerOperationsClient) => c.listImages(KEY, '247EXP0001')],
  ])('stops reading a %s answer over the limit and fails with LOOKUP_TOO_LARGE, not retried', async (_name, call) => {
    const written = { bytes: 0 };
    const failure = await call(await clientOf(endlessBody(written))).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'LOOKUP_TOO_LARGE', retryable: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(written.bytes).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses an answer whose Content-Length is over the limit before reading it', async () => {
    const c = await clientOf((response) =>
      response.writeHead(200, { 'content-length': String(MAX_ANSWER_BYTES + 1) }).end('x'.repeat(MAX_ANSWER_BYTES + 1)),
    );
    await expect(c.listImages(KEY, '247EXP0001')).rejects.toMatchObject({ code: 'LOOKUP_TOO_LARGE' });
  });

  it('clears every configured key out of a price refusal: ErrorMessage and Errors', async () => {
    const c = await clientOf(
      json({ IsError: true, Errors: [{ Field: 'ApiKey', Message: `Apikey ${OTHER_KEY} is not yours` }] }),
    );
    const answer = await c.quotePrice(KEY, request);
    expect(answer).toEqual({ kind: 'carrier_error', message: 'Apikey [redacted] is not yours' });

    await c.close();
    const d = await clientOf(json({ IsError: true, ErrorMessage: `Apikey ${KEY} not found` }));
    expect(await d.quotePrice(KEY, request)).toEqual({ kind: 'carrier_error', message: 'Apikey [redacted] not found' });
  });

  it('clears a key spelled with JSON escapes out of an images refusal', async () => {
    const escaped = [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const c = await clientOf((response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          `{"Items":null,"Errors":[{"Code":"APIKEY_NOT_FOUND","Message":"Apikey ${escaped} not found"}],"ErrorMessage":null}`,
        ),
    );
    expect(await c.listImages(KEY, '247EXP0001')).toEqual({
      kind: 'carrier_error',
      code: 'APIKEY_NOT_FOUND',
      message: 'Apikey [redacted] not found',
    });
  });

  it('never quotes a key from a body that is not JSON', async () => {
    const c = await clientOf((response) => response.writeHead(200).end(`${KEY} is not a key we know`));
    const failure = await c.listImages(KEY, '247EXP0001').catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'LOOKUP_MALFORMED' });
    expect((failure as Error).message).not.toContain(KEY.slice(0, 20));
  });
});
