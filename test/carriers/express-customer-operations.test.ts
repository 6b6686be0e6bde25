/**
 * 247Express's customer operations, price calculation and order images, declared as contract code in
 * its folder and sent through the product's one transport over real HTTP: the requests as the carrier
 * takes them, the answers read into the product's quote and image list, and every key cleared out.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EXPRESS_247 } from '../../src/carriers/247express/carrier.js';
import type { CarrierOrderImages } from '../../src/carriers/carrier-order-images.js';
import type { CarrierPriceQuotes, PriceQuoteRequest } from '../../src/carriers/carrier-price-quotes.js';
import { CarrierTransport } from '../../src/carriers/client/carrier-transport.js';
import { KeyRing } from '../../src/carriers/client/key-ring.js';
import { PUBLISHED_PRICE_ANSWER, PUBLISHED_PRICE_REQUEST } from '../support/published-price-example.js';

const KEY = 'co-3d9f1b7a-62e4-4c08-b5a1-9e7c2d4f8a16';
const OTHER_KEY = 'co-8a2e5c1f-0d7b-4e93-a6f4-1b3c9d5e7f20';
const keys = new KeyRing([
  ['hanoi-shop', KEY],
  ['saigon-shop', OTHER_KEY],
]);
const account = keys.accountOf('hanoi-shop');
const MAX_ANSWER_BYTES = 100_000;
const priceQuotes = EXPRESS_247.priceQuotes as CarrierPriceQuotes;
const orderImages = EXPRESS_247.orderImages as CarrierOrderImages;

let server: Server | undefined;
let transport: CarrierTransport | undefined;
afterEach(async () => {
  await transport?.close();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = transport = undefined;
});

/** A request as the loopback carrier received it. */
interface Received {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** The customer operations on loopback below `/co`; a transport to them with a 100 KB answer limit, the key in `ApiKey`. */
async function transportOf(
  answer: (response: ServerResponse) => void,
  seen: Received[] = [],
): Promise<CarrierTransport> {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { method, url, headers } = request;
      seen.push({ method, url, headers, body: Buffer.concat(chunks).toString('utf8') });
      answer(response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  transport = new CarrierTransport(
    {
      trackingUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/co`,
      keyHeader: 'ApiKey',
      timeoutMs: 5_000,
      maxAnswerBytes: MAX_ANSWER_BYTES,
      connections: 1,
    },
    keys,
  );
  return transport;
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

/** The published example's request, in the product's fields. */
const request: PriceQuoteRequest = {
  toProvinceName: PUBLISHED_PRICE_REQUEST.ToProvinceName,
  toDistrictName: PUBLISHED_PRICE_REQUEST.ToDistrictName,
  toWardName: PUBLISHED_PRICE_REQUEST.ToWardName,
  length: PUBLISHED_PRICE_REQUEST.Length,
  width: PUBLISHED_PRICE_REQUEST.Width,
  height: PUBLISHED_PRICE_REQUEST.Height,
  realWeight: PUBLISHED_PRICE_REQUEST.RealWeight,
  clientHubId: PUBLISHED_PRICE_REQUEST.ClientHubID,
  serviceTypeId: PUBLISHED_PRICE_REQUEST.ServiceTypeID,
};

describe("247Express's price calculation", () => {
  it('posts the published example as the carrier wrote it, the key in the configured header, and reads its answer as the quote', async () => {
    const seen: Received[] = [];
    const t = await transportOf(json(PUBLISHED_PRICE_ANSWER), seen);

    const answer = await priceQuotes.quote(account, request, t.call());

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/co/Api/Customer/GetPriceForCustomerAPI' });
    expect(seen[0]!.headers.apikey).toBe(KEY);
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[0]!.body)).toEqual(PUBLISHED_PRICE_REQUEST);
    expect(Object.keys(JSON.parse(seen[0]!.body) as object)).toEqual(Object.keys(PUBLISHED_PRICE_REQUEST));
    const line = (extraServiceId: number, serviceId: string, serviceName: string, cost: string) => ({
      extraServiceId,
      serviceId,
      serviceName,
      type: serviceId === 'DE' ? 1 : 3,
      cost,
      informFee: '0',
      isDefaultService: true,
    });
    expect(answer).toEqual({
      kind: 'quote',
      quote: {
        mainPrice: '0',
        totalServiceCost: '1563936',
        couponMoneyRemainder: '0',
        depositChangeAmount: '0',
        calWeight: 36,
        weight: 60,
        priceMatrixId: 'PM-HCM-HN-2019',
        lines: [
          line(1, 'DE', 'Chuyển phát nhanh', '1184800'),
          line(12, 'Fuel', 'Phụ phí xăng dầu', '236960'),
          line(13, 'VAT', 'Thuế GTGT', '142176'),
        ],
      },
    });
  });

  it('reads a refusal from its error fields alone, and fails a quote without its numbers as malformed', async () => {
    const t = await transportOf(json({ IsError: true, ErrorMessage: 'ToWardName không hợp lệ' }));
    expect(await priceQuotes.quote(account, request, t.call())).toEqual({
      kind: 'carrier_error',
      message: 'ToWardName không hợp lệ',
    });

    await t.close();
    const u = await transportOf(json({ ...PUBLISHED_PRICE_ANSWER, MainPrice: undefined }));
    await expect(priceQuotes.quote(account, request, u.call())).rejects.toMatchObject({
      code: 'LOOKUP_MALFORMED',
      message: expect.stringContaining('price answer') as unknown as string,
    });
  });
});

describe("247Express's customer operations through the transport", () => {
  it.each([
    ['price', (t: CarrierTransport) => priceQuotes.quote(account, request, t.call())],
    ['images', (t: CarrierTransport) => orderImages.list(account, '247EXP0001', t.call())],
  ])('stops reading a %s answer over the limit and fails with LOOKUP_TOO_LARGE, not retried', async (_name, call) => {
    const written = { bytes: 0 };
    const failure = await call(await transportOf(endlessBody(written))).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'LOOKUP_TOO_LARGE', retryable: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(written.bytes).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses an answer whose Content-Length is over the limit before reading it', async () => {
    const t = await transportOf((response) =>
      response.writeHead(200, { 'content-length': String(MAX_ANSWER_BYTES + 1) }).end('x'.repeat(MAX_ANSWER_BYTES + 1)),
    );
    await expect(orderImages.list(account, '247EXP0001', t.call())).rejects.toMatchObject({ code: 'LOOKUP_TOO_LARGE' });
  });

  it('clears every configured key out of a price refusal: ErrorMessage and Errors', async () => {
    const t = await transportOf(
      json({ IsError: true, Errors: [{ Field: 'ApiKey', Message: `Apikey ${OTHER_KEY} is not yours` }] }),
    );
    const answer = await priceQuotes.quote(account, request, t.call());
    expect(answer).toEqual({ kind: 'carrier_error', message: 'Apikey [redacted] is not yours' });

    await t.close();
    const d = await transportOf(json({ IsError: true, ErrorMessage: `Apikey ${KEY} not found` }));
    expect(await priceQuotes.quote(account, request, d.call())).toEqual({
      kind: 'carrier_error',
      message: 'Apikey [redacted] not found',
    });
  });

  it('clears a key spelled with JSON escapes out of an images refusal', async () => {
    const escaped = [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const t = await transportOf((response) =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          `{"Items":null,"Errors":[{"Code":"APIKEY_NOT_FOUND","Message":"Apikey ${escaped} not found"}],"ErrorMessage":null}`,
        ),
    );
    expect(await orderImages.list(account, '247EXP0001', t.call())).toEqual({
      kind: 'carrier_error',
      code: 'APIKEY_NOT_FOUND',
      message: 'Apikey [redacted] not found',
    });
  });

  it('never quotes a key from a body that is not JSON', async () => {
    const t = await transportOf((response) => response.writeHead(200).end(`${KEY} is not a key we know`));
    const failure = await orderImages.list(account, '247EXP0001', t.call()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: 'LOOKUP_MALFORMED' });
    expect((failure as Error).message).not.toContain(KEY.slice(0, 20));
  });

  it("posts the order code for its images with the key in the configured header, and reads each image's number and link", async () => {
    const seen: Received[] = [];
    const t = await transportOf(
      json({
        Items: [
          { No: 1, OrderCode: '247EXP0001', ImageURL: 'https://img.example.vn/1.jpg' },
          { No: 2, OrderCode: '247EXP0001', ImageURL: 'https://img.example.vn/2.jpg' },
        ],
        Errors: null,
        ErrorMessage: null,
      }),
      seen,
    );

    const answer = await orderImages.list(account, '247EXP0001', t.call());

    expect(seen.map(({ method, url, headers, body }) => [method, url, headers.apikey, body])).toEqual([
      ['POST', '/co/Api/Customer/GetOrderImages', KEY, '{"OrderCode":"247EXP0001"}'],
    ]);
    expect(answer).toEqual({
      kind: 'images',
      images: [
        { no: 1, imageUrl: 'https://img.example.vn/1.jpg' },
        { no: 2, imageUrl: 'https://img.example.vn/2.jpg' },
      ],
    });
  });
});
