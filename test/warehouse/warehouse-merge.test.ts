import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/warehouse/migrations.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { WarehouseError } from '../../src/warehouse/warehouse-errors.js';
import { mergeWarehouses } from '../../src/warehouse/warehouse-merge.js';
import { useTempDirs } from './warehouse-fixtures.js';

const temp = useTempDirs();

/** A quote of 1 kg to Hanoi for EX100000001, quoted at `quotedAt` for `total` dong, with one line of that cost. */
async function addQuote(warehouse: Warehouse, quotedAt: string, total: number): Promise<void> {
  await warehouse.run(
    `INSERT INTO price_quotes (carrier, quote_id, run_id, order_code, account_alias, to_province_name, to_district_name,
       to_ward_name, length, width, height, real_weight, client_hub_id, service_type_id, ok, total_service_cost, quoted_at)
     VALUES ('247express', 'q-1', 'price-1', 'EX100000001', 'hanoi-shop', 'Hà Nội', 'Đống Đa', 'Láng Hạ', 10, 10, 10, 1, 'HNI-HUB-1',
       'STD', true, $total, $quotedAt::TIMESTAMPTZ)`,
    { total, quotedAt },
  );
  await warehouse.run(
    `INSERT INTO price_quote_lines (carrier, quote_id, line_no, service_id, cost) VALUES ('247express', 'q-1', 1, 'STD', $total)`,
    { total },
  );
}

/** EX100000001's image list fetched at `fetchedAt`, of `count` images. */
async function addImageList(warehouse: Warehouse, fetchedAt: string, count: number): Promise<void> {
  await warehouse.run(
    `INSERT INTO order_image_lists VALUES ('247express', 'EX100000001', 'hanoi-shop', $count, $fetchedAt::TIMESTAMPTZ, 'images-1')`,
    { count, fetchedAt },
  );
  for (let no = 1; no <= count; no++)
    await warehouse.run(
      `INSERT INTO order_images (carrier, order_code, no, image_url, fetched_at) VALUES ('247express', 'EX100000001', $no, $url, $fetchedAt::TIMESTAMPTZ)`,
      { no, url: `http://img.example/${count}/${no}.jpg`, fetchedAt },
    );
}

async function quoteAndImages(warehouse: Warehouse): Promise<unknown> {
  const read = async (sql: string) => (await warehouse.readAll(sql)).getRowObjectsJson();
  return {
    quotes: await read('SELECT quote_id, CAST(total_service_cost AS INTEGER) AS total FROM price_quotes'),
    lines: await read('SELECT quote_id, line_no, CAST(cost AS INTEGER) AS cost FROM price_quote_lines'),
    lists: await read('SELECT order_code, image_count FROM order_image_lists'),
    images: await read('SELECT no, image_url FROM order_images ORDER BY no'),
  };
}

describe('merging warehouses', () => {
  it('keeps the newest price quote and image list with their lines and images, whichever file comes first', async () => {
    const { warehouse: target, dir } = await temp.open();
    const files = [join(dir, 'newer.duckdb'), join(dir, 'older.duckdb')];
    await addQuote(target, '2026-11-20T09:00:00+07:00', 30_000);
    await addImageList(target, '2026-11-20T09:00:00+07:00', 1);
    for (const [file, day, total, images] of [
      [files[0]!, '2026-11-22', 32_000, 2],
      [files[1]!, '2026-11-18', 28_000, 3],
    ] as const) {
      const worker = await Warehouse.open(file);
      try {
        await addQuote(worker, `${day}T09:00:00+07:00`, total);
        await addImageList(worker, `${day}T09:00:00+07:00`, images);
      } finally {
        await worker.close();
      }
    }

    await mergeWarehouses(target, files);
    await mergeWarehouses(target, files);

    expect(await quoteAndImages(target)).toEqual({
      quotes: [{ quote_id: 'q-1', total: 32_000 }],
      lines: [{ quote_id: 'q-1', line_no: 1, cost: 32_000 }],
      lists: [{ order_code: 'EX100000001', image_count: 2 }],
      images: [
        { no: 1, image_url: 'http://img.example/2/1.jpg' },
        { no: 2, image_url: 'http://img.example/2/2.jpg' },
      ],
    });
  });
});

describe('mergeWarehouses: files that are not warehouses', () => {
  it('refuses a file that is not a DuckDB database before merging any, naming it', async () => {
    const { warehouse: target, dir } = await temp.open();
    const worker = await Warehouse.open(join(dir, 'worker.duckdb'));
    await addQuote(worker, '2026-11-20T08:00:00+07:00', 30_000);
    await worker.close();
    const csv = join(dir, 'orders.csv');
    await writeFile(csv, 'order_code\nEX100000001\n');
    const refused = await mergeWarehouses(target, [join(dir, 'worker.duckdb'), csv]).catch((error) => error);
    expect(refused).toBeInstanceOf(WarehouseError);
    expect(refused.code).toBe('WAREHOUSE_NOT_DUCKDB');
    expect(refused.message).toBe(`merge: ${csv} is not a DuckDB database file`);
    expect((await target.readAll('SELECT count(*) AS n FROM price_quotes')).getRowObjectsJS()[0]!.n).toBe(0n);
  });
  it('refuses a DuckDB file of something else, naming it, and merges none of it', async () => {
    const { warehouse: target, dir } = await temp.open();
    const other = join(dir, 'erp.duckdb');
    const instance = await DuckDBInstance.create(other);
    const connection = await instance.connect();
    await connection.run(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMPTZ NOT NULL)',
    );
    await connection.run(`INSERT INTO schema_migrations VALUES (${SCHEMA_VERSION}, 'erp tables', now())`);
    await connection.run('CREATE TABLE price_quotes AS SELECT * FROM (VALUES (1)) AS t(quote_id)');
    connection.closeSync();
    instance.closeSync();
    const refused = await mergeWarehouses(target, [other]).catch((error) => error);
    expect(refused).toBeInstanceOf(WarehouseError);
    expect(refused.code).toBe('WAREHOUSE_NOT_OURS');
    expect(refused.message).toContain(`merge: ${other} is not a parcel-recon warehouse`);
    expect((await target.readAll('SELECT count(*) AS n FROM price_quotes')).getRowObjectsJS()[0]!.n).toBe(0n);
  });
});
