/**
 * Quote requests from a DuckDB file, a PostgreSQL and a MariaDB server: the request columns in snake_case or
 * PascalCase, numbers of any SQL type, an invalid row refused with its reason, missing columns named.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  csvPriceRequests,
  type PriceInput,
  type PriceInputSource,
  tablePriceRequests,
} from '../../src/pipeline/price-inputs.js';
import { SourceError } from '../../src/sources/order-code-source.js';
import { type MariadbServer, startMariadb } from '../support/mariadb-server.js';
import { type PostgresServer, startPostgres } from '../support/postgres-server.js';

const ROWS_SQL = `
  SELECT * FROM (VALUES
    ('EX100000001', 'Hà Nội', 'Quận Ba Đình', 'Phường Kim Mã', 10, 20.5, 30, 1.25, 'HNI-HUB-1', 'DE', 'hanoi-shop'),
    ('EX100000002', 'Đà Nẵng', 'Quận Hải Châu', 'Phường Hòa Thuận', 10, -1, 30, 2, 'HNI-HUB-1', 'TK', NULL)
  ) AS t(order_code, to_province_name, to_district_name, to_ward_name, length, width, height, real_weight, client_hub_id, service_type_id, account)`;

async function itemsOf(source: PriceInputSource): Promise<PriceInput[]> {
  const items: PriceInput[] = [];
  for await (const item of source.items()) items.push(item);
  return items;
}

const EXPECTED: PriceInput[] = [
  {
    kind: 'request',
    request: {
      toProvinceName: 'Hà Nội',
      toDistrictName: 'Quận Ba Đình',
      toWardName: 'Phường Kim Mã',
      length: 10,
      width: 20.5,
      height: 30,
      realWeight: 1.25,
      clientHubId: 'HNI-HUB-1',
      serviceTypeId: 'DE',
    },
    orderCode: 'EX100000001',
    account: 'hanoi-shop',
    origin: expect.stringMatching(/ row 1$/) as unknown as string,
  },
  {
    kind: 'rejected',
    orderCode: 'EX100000002',
    reason: 'Width must not be negative',
    origin: expect.stringMatching(/ row 2$/) as unknown as string,
  },
];

describe('quote requests from DuckDB', () => {
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-price-src-'));
    file = join(dir, 'erp.duckdb');
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    // DECIMAL measures, as an ERP would keep them.
    await connection.run(`CREATE TABLE parcels AS SELECT order_code, to_province_name, to_district_name, to_ward_name, CAST(length AS DECIMAL(9,2)) AS length,
      CAST(width AS DECIMAL(9,2)) AS width, CAST(height AS INTEGER) AS height, CAST(real_weight AS DECIMAL(9,3)) AS real_weight, client_hub_id, service_type_id, account FROM (${ROWS_SQL})`);
    connection.closeSync();
    instance.closeSync();
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the requests, refusing the invalid row with its reason', async () => {
    expect(
      await itemsOf(tablePriceRequests({ kind: 'duckdb', file, query: 'SELECT * FROM parcels ORDER BY order_code' })),
    ).toEqual(EXPECTED);
  });

  it('names the missing columns, and takes ClientHubID from the default when the query has none', async () => {
    await expect(
      itemsOf(tablePriceRequests({ kind: 'duckdb', file, query: 'SELECT order_code, length FROM parcels' })),
    ).rejects.toThrow(SourceError);
    await expect(
      itemsOf(tablePriceRequests({ kind: 'duckdb', file, query: 'SELECT order_code, length FROM parcels' })),
    ).rejects.toThrow(/the DuckDB query: no ToProvinceName, ToDistrictName, ToWardName, Width/);
    const items = await itemsOf(
      tablePriceRequests(
        { kind: 'duckdb', file, query: 'SELECT * EXCLUDE (client_hub_id) FROM parcels ORDER BY order_code' },
        {
          defaultClientHubId: 'HUB-X',
        },
      ),
    );
    expect(items[0]).toMatchObject({ kind: 'request', request: { clientHubId: 'HUB-X' } });
  });
});

describe('quote requests from PostgreSQL', () => {
  let server: PostgresServer;

  beforeAll(async () => {
    server = await startPostgres();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE TABLE parcels AS SELECT order_code AS "OrderCode", to_province_name AS "ToProvinceName", to_district_name AS "ToDistrictName", to_ward_name AS "ToWardName",
      length::numeric AS "Length", width::numeric AS "Width", height AS "Height", real_weight::numeric AS "RealWeight", client_hub_id AS "ClientHubID", service_type_id AS "ServiceTypeID", account
      FROM (${ROWS_SQL}) AS t`);
    await admin.end();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('reads the PascalCase columns, refusing the invalid row with its reason', async () => {
    expect(
      await itemsOf(
        tablePriceRequests({ kind: 'postgres', url: server.url, query: 'SELECT * FROM parcels ORDER BY "OrderCode"' }),
      ),
    ).toEqual(EXPECTED);
  });
});

describe('quote requests from MySQL', () => {
  let server: MariadbServer;

  beforeAll(async () => {
    server = await startMariadb();
    const admin = await server.connect();
    try {
      await admin.query(`CREATE TABLE parcels (order_code VARCHAR(20), to_province_name VARCHAR(40), to_district_name VARCHAR(40),
        to_ward_name VARCHAR(40), length INT, width DECIMAL(8,2), height BIGINT, real_weight DECIMAL(8,3), client_hub_id VARCHAR(20),
        service_type_id VARCHAR(4), account VARCHAR(20)) CHARACTER SET utf8mb4`);
      // The same rows, as MySQL inserts them: the VALUES list of ROWS_SQL.
      const values = ROWS_SQL.slice(ROWS_SQL.indexOf('VALUES') + 'VALUES'.length, ROWS_SQL.lastIndexOf(') AS t('));
      await admin.query(`INSERT INTO parcels VALUES ${values}`);
    } finally {
      await admin.end();
    }
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('streams the rows of a query, the password given apart from the URL, refusing the invalid row with its reason', async () => {
    const source = tablePriceRequests({
      kind: 'mysql',
      url: server.url,
      query: 'SELECT * FROM parcels ORDER BY order_code',
      password: server.password,
    });
    expect(source.description).not.toContain(server.password);
    expect(await itemsOf(source)).toEqual(EXPECTED);
  });
});

describe('quote requests from CSV', () => {
  it('reads a BOM, semicolons, CRLF, quoted fields and mixed-case headers; refuses short and invalid rows with their line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-price-csv-'));
    try {
      const file = join(dir, 'quotes.csv');
      const lines = [
        'Order_Code;TOPROVINCENAME;to_district_name;ToWardName;Length;Width;Height;real_weight;ClientHubId;service_type_id',
        'EX100000001;"Hà Nội";"Quận Ba Đình; cũ";Phường Kim Mã;10;20.5;30;1.25;HNI-HUB-1;DE',
        '',
        'EX100000002;Hà Nội;Quận Ba Đình;Phường Kim Mã;10;20;30',
        'EX100000003;Hà Nội;Quận Ba Đình;Phường Kim Mã;1e400;20;30;abc;HNI-HUB-1;',
      ];
      await writeFile(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${lines.join('\r\n')}\r\n`)]));
      expect(await itemsOf(csvPriceRequests(file))).toEqual([
        {
          kind: 'request',
          request: {
            toProvinceName: 'Hà Nội',
            toDistrictName: 'Quận Ba Đình; cũ',
            toWardName: 'Phường Kim Mã',
            length: 10,
            width: 20.5,
            height: 30,
            realWeight: 1.25,
            clientHubId: 'HNI-HUB-1',
            serviceTypeId: 'DE',
          },
          orderCode: 'EX100000001',
          account: null,
          origin: `${file}:2`,
        },
        { kind: 'rejected', orderCode: null, reason: 'the row has 7 fields, the header 10', origin: `${file}:4` },
        {
          kind: 'rejected',
          orderCode: 'EX100000003',
          reason: 'Length is not a number; RealWeight is not a number; ServiceTypeID is empty',
          origin: `${file}:5`,
        },
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
