/**
 * `price` and `images` ask the carrier `--carrier` names (or the configured `carrier`) through its
 * definition: 247Express's customer operations over real HTTP, and a carrier that offers neither
 * (GHN) refused in one line, exit 2, before anything is sent or written.
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../support/cli-process.js';
import { PRICE_REQUEST_CSV_HEADER } from '../support/customer-operations.js';
import { PUBLISHED_PRICE_ANSWER } from '../support/published-price-example.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const KEY = 'co-51e0a7c3-94d2-4b6f-8a13-2c7e9f0d4b58';

describe('price and images for the carrier named', () => {
  let server: Server;
  let baseUrl: string;
  const received: { url: string | undefined; apiKey: string | undefined }[] = [];
  let workspace: TrackingWorkspace;
  let requests: string;

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response) => {
      received.push({ url: request.url, apiKey: request.headers.apikey as string | undefined });
      request.resume();
      request.on('end', () =>
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PUBLISHED_PRICE_ANSWER)),
      );
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    workspace = await trackingWorkspace();
    requests = await workspace.writeCsv('requests.csv', [
      [...PRICE_REQUEST_CSV_HEADER],
      ['Hà Nội', 'Quận Ba Đình', 'Phường Kim Mã', '10', '20', '30', '1.25', 'HNI-HUB-1', 'DE', 'EX100000001', 'shop'],
    ]);
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await workspace.dispose();
  });

  const env = () => ({ PARCEL_RECON_API_KEYS: `shop=${KEY}`, PARCEL_RECON_BASE_URL: baseUrl });

  it("refuses GHN's price and images in one line with exit 2, sending nothing and writing no warehouse", async () => {
    const db = `${workspace.dir}/ghn.duckdb`;
    const price = await cli(['price', '--carrier', 'ghn', '--input', requests, '--db', db], env());
    expect(price.code, price.stderr).toBe(2);
    expect(price.stderr.trim().split('\n')).toEqual([
      'parcel-recon: ghn offers no price calculation; price runs for 247express: nothing was sent; give --carrier a carrier that offers it',
    ]);

    // The configured carrier, and no address for the operations: the carrier is what is wrong.
    const images = await cli(['images', '--codes', 'GHNA1B2C3', '--db', db], {
      PARCEL_RECON_API_KEYS: `shop=${KEY}`,
      PARCEL_RECON_CARRIER: 'ghn',
    });
    expect(images.code, images.stderr).toBe(2);
    expect(images.stderr.trim().split('\n')).toEqual([
      'parcel-recon: ghn offers no order images; images runs for 247express: nothing was sent; give --carrier a carrier that offers it',
    ]);

    expect(received).toEqual([]);
    expect(existsSync(db)).toBe(false);
  });

  it("quotes with 247Express's price calculation when --carrier names it, its quotes stored as 247express's", async () => {
    received.length = 0;
    const result = await cli(
      ['price', '--carrier', '247express', '--input', requests, '--db', workspace.dbPath, '--json'],
      env(),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(received).toEqual([{ url: '/Api/Customer/GetPriceForCustomerAPI', apiKey: KEY }]);
    expect(
      await workspace.query(
        'SELECT carrier, order_code, ok, CAST(total_service_cost AS VARCHAR) AS total FROM price_quotes',
      ),
    ).toEqual([{ carrier: '247express', order_code: 'EX100000001', ok: true, total: '1563936.0000' }]);
  });
});
