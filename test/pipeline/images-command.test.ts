/**
 * `parcel-recon images` against the sandbox over real HTTP: every delivered order's list is stored, an
 * order without images as known-empty; a transient failure is retried; a malformed answer is recorded
 * and not loaded; `--download` keeps to its allow-list, its size cap and its folder.
 */

import { readdir, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATUS } from '../../src/carriers/247express/contract.js';
import type { OrderTruth } from '../../src/sandbox/ground-truth.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { keysOf, startTestSandbox, truthOrders } from '../sandbox/sandbox-http.js';
import { cli, sandboxEnv } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const IMAGE_BYTES = 600;
/** A download whose folder and disk took every file it fetched. */
const ALL_WRITTEN = { notWritten: 0, notWrittenCause: null };

interface ImagesSummary {
  runId: string;
  ordersToAsk: number;
  listsStored: number;
  emptyLists: number;
  images: number;
  failed: number;
  downloads: {
    saved: number;
    refused: number;
    refusedByCode: Record<string, number>;
    notWritten: number;
    notWrittenCause: string | null;
  } | null;
}

async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true, recursive: true });
    return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
  } catch {
    return [];
  }
}

describe('parcel-recon images', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let truth: OrderTruth[];
  let delivered: OrderTruth[];

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      ordersPerAccount: 40,
      seed: 11,
      imageBytes: IMAGE_BYTES,
      lifecycle: { noImageRate: 0.2 },
    });
    workspace = await trackingWorkspace();
    truth = await truthOrders(sandbox);
    delivered = truth.filter((o) => o.status === STATUS.DELIVERED);
    const orders = await workspace.writeCsv('orders.csv', [
      ['order_code', 'account'],
      ...truth.map((o) => [o.orderCode, o.account]),
    ]);
    expect((await workspace.track(sandbox, [orders])).counters.ok).toBe(truth.length);
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  const run = (args: string[]) =>
    cli(
      [
        'images',
        '--db',
        workspace.dbPath,
        '--rate',
        '200',
        '--concurrency',
        '8',
        '--retry-min-ms',
        '5',
        '--json',
        ...args,
      ],
      sandboxEnv(sandbox),
    );

  it('stores the image list of every delivered order, an order without images as known-empty, and asks none twice', async () => {
    // One order's list fails twice over before it is answered: retried.
    const retriedCode = delivered.find((o) => o.imageCount > 0)!.orderCode;
    sandbox.state.faults.script({ kind: 'server_error', operation: 'images', orderCode: retriedCode, times: 2 });
    const result = await run([]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as ImagesSummary;
    for (const key of Object.values(keysOf(sandbox))) expect(result.stdout + result.stderr).not.toContain(key);
    const empty = delivered.filter((o) => o.imageCount === 0);
    expect(empty.length).toBeGreaterThan(0);
    expect(summary).toMatchObject({
      ordersToAsk: delivered.length,
      listsStored: delivered.length,
      emptyLists: empty.length,
      failed: 0,
    });

    const lists = await workspace.query<{ order_code: string; image_count: number; stored: string }>(
      'SELECT l.order_code, l.image_count, (SELECT count(*) FROM order_images i WHERE i.order_code = l.order_code) AS stored FROM order_image_lists l',
    );
    const byCode = new Map(lists.map((l) => [l.order_code, l]));
    expect(lists).toHaveLength(delivered.length);
    for (const order of delivered) {
      expect(byCode.get(order.orderCode)?.image_count).toBe(order.imageCount);
      expect(Number(byCode.get(order.orderCode)?.stored)).toBe(order.imageCount);
    }
    // Known-empty is a row with image_count 0; an order never asked has no row at all.
    const undelivered = truth.find((o) => o.status !== STATUS.DELIVERED)!;
    expect(byCode.has(undelivered.orderCode)).toBe(false);
    const [retried] = await workspace.query<{ outcome: string; attempts: number }>(
      `SELECT outcome, attempts FROM lookup_results WHERE run_id = '${summary.runId}' AND order_code = '${retriedCode}'`,
    );
    expect(retried).toEqual({ outcome: 'ok', attempts: 3 });

    const again = JSON.parse((await run([])).stdout) as ImagesSummary;
    expect(again.ordersToAsk).toBe(0);
  });

  it.each(['rate_limited', 'reset', 'hang', 'malformed'] as const)(
    'retries a %s answer and then stores the list',
    async (kind) => {
      const order = delivered.filter((o) => o.imageCount > 0)[1]!;
      sandbox.state.faults.script({ kind, operation: 'images', orderCode: order.orderCode, times: 1 });
      const result = await run(['--codes', order.orderCode, '--timeout-ms', '1000']);
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout) as ImagesSummary & { durationMs: number };
      expect(summary).toMatchObject({ listsStored: 1, images: order.imageCount, failed: 0 });
      // The sandbox's 429 says Retry-After: 1; the retry waited for it.
      if (kind === 'rate_limited') expect(summary.durationMs).toBeGreaterThanOrEqual(1000);
      const [row] = await workspace.query<{ outcome: string; attempts: number }>(
        `SELECT outcome, attempts FROM lookup_results WHERE run_id = '${summary.runId}' AND order_code = '${order.orderCode}'`,
      );
      expect(row).toEqual({ outcome: 'ok', attempts: 2 });
    },
  );

  it('records a malformed answer after every retry without loading it, and exits 1', async () => {
    const order = delivered.find((o) => o.imageCount > 0)!;
    sandbox.state.faults.script({ kind: 'malformed', operation: 'images', orderCode: order.orderCode, times: 3 });
    const before = await workspace.query<{ fetched_at: string }>(
      `SELECT CAST(fetched_at AS VARCHAR) AS fetched_at FROM order_image_lists WHERE order_code = '${order.orderCode}'`,
    );
    const result = await run(['--codes', order.orderCode, '--attempts', '3']);
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout) as ImagesSummary;
    expect(summary).toMatchObject({ failed: 1, listsStored: 0 });
    const [recorded] = await workspace.query<{ outcome: string; error_code: string; attempts: number }>(
      `SELECT outcome, error_code, attempts FROM lookup_results WHERE run_id = '${summary.runId}' AND order_code = '${order.orderCode}'`,
    );
    expect(recorded).toEqual({ outcome: 'transport_error', error_code: 'LOOKUP_MALFORMED', attempts: 3 });
    // The list stored before is untouched.
    const after = await workspace.query<{ fetched_at: string }>(
      `SELECT CAST(fetched_at AS VARCHAR) AS fetched_at FROM order_image_lists WHERE order_code = '${order.orderCode}'`,
    );
    expect(after).toEqual(before);
  });

  it('records a carrier refusal (another account, unknown code) and loads nothing for it', async () => {
    const order = delivered.find((o) => o.imageCount > 0 && o.account !== 'hanoi-shop')!;
    const input = await workspace.writeCsv('codes.csv', [
      ['order_code', 'account'],
      [order.orderCode, 'hanoi-shop'],
      ['EX199999999', 'hanoi-shop'],
    ]);
    const result = await run(['--input', input]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as ImagesSummary & { carrierErrorsByCode: Record<string, number> };
    expect(summary.carrierErrorsByCode).toEqual({
      ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT: 1,
      ORDERCODE_NOT_FOUND: 1,
    });
    expect(await workspace.query(`SELECT * FROM order_image_lists WHERE order_code = 'EX199999999'`)).toEqual([]);
  });

  it('downloads from the allowed host into DIR, and refuses other hosts and files over the cap', async () => {
    const withImages = delivered.filter((o) => o.imageCount > 0).slice(0, 3);
    const codes = withImages.map((o) => o.orderCode).join(',');
    const imageCount = withImages.reduce((n, o) => n + o.imageCount, 0);

    const capped = join(workspace.dir, 'capped');
    const capRun = await run(['--codes', codes, '--download', capped, '--max-bytes', String(IMAGE_BYTES - 1)]);
    expect(capRun.code, capRun.stderr).toBe(0);
    const tooLarge = JSON.parse(capRun.stdout) as ImagesSummary;
    expect(tooLarge.downloads).toEqual({
      saved: 0,
      refused: imageCount,
      refusedByCode: { TOO_LARGE: imageCount },
      ...ALL_WRITTEN,
    });
    expect(await filesUnder(capped)).toEqual([]);

    const elsewhere = join(workspace.dir, 'elsewhere');
    const notAllowed = JSON.parse(
      (await run(['--codes', codes, '--download', elsewhere, '--allow-host', 'images.example.org'])).stdout,
    ) as ImagesSummary;
    expect(notAllowed.downloads).toEqual({
      saved: 0,
      refused: imageCount,
      refusedByCode: { HOST_NOT_ALLOWED: imageCount },
      ...ALL_WRITTEN,
    });
    expect(await filesUnder(elsewhere)).toEqual([]);
    const [refusedRow] = await workspace.query<{ downloaded_path: string | null; download_error: string }>(
      `SELECT downloaded_path, download_error FROM order_images WHERE order_code = '${withImages[0]!.orderCode}' AND no = 1`,
    );
    expect(refusedRow).toEqual({
      downloaded_path: null,
      download_error: expect.stringMatching(/^HOST_NOT_ALLOWED: host 127\.0\.0\.1:\d+ is not on the allow-list$/),
    });

    const saved = join(workspace.dir, 'saved');
    const allowed = JSON.parse((await run(['--codes', codes, '--download', saved])).stdout) as ImagesSummary;
    expect(allowed.downloads).toMatchObject({ saved: imageCount, refused: 0 });
    const files = await filesUnder(saved);
    expect(files).toHaveLength(imageCount);
    for (const file of files) {
      expect(file.startsWith(resolve(saved) + sep)).toBe(true);
      expect((await stat(file)).size).toBe(IMAGE_BYTES);
    }
    const paths = await workspace.query<{ downloaded_path: string }>(
      `SELECT downloaded_path FROM order_images WHERE order_code IN (${withImages.map((o) => `'${o.orderCode}'`).join(',')}) ORDER BY 1`,
    );
    expect(paths.map((p) => p.downloaded_path)).toEqual([...files].sort());
  });
});

describe('parcel-recon images --download against a hostile carrier', () => {
  let server: Server;
  let url: string;
  let workspace: TrackingWorkspace;

  beforeAll(async () => {
    workspace = await trackingWorkspace();
    // A server answering every images request with links whose paths try to leave DIR, and one file over the cap.
    server = createServer((req, res) => {
      if (req.method === 'POST') {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const code = (JSON.parse(body) as { OrderCode: string }).OrderCode;
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify({
              Items: [
                { No: 1, OrderCode: code, ImageURL: `${url}/images/..%2F..%2Fescape.jpg` },
                { No: 2, OrderCode: '/etc/passwd', ImageURL: `${url}/../../../tmp/x.sh` },
                { No: 3, OrderCode: code, ImageURL: `${url}/big.jpg` },
              ],
              Errors: [],
              ErrorMessage: '',
            }),
          );
        });
        return;
      }
      if (req.url === '/big.jpg') {
        // No Content-Length: the cap must stop the stream itself.
        res.write(Buffer.alloc(64 * 1024));
        res.end(Buffer.alloc(64 * 1024));
        return;
      }
      res.end(Buffer.alloc(100, 1));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await workspace.dispose();
  });

  it('names every file from the order code, number and a safe extension, inside DIR, and aborts a stream past the cap', async () => {
    const dir = join(workspace.dir, 'nested', 'images');
    const result = await cli(
      [
        'images',
        '--codes',
        '../../escape,..\\..\\win',
        '--db',
        workspace.dbPath,
        '--download',
        dir,
        '--max-bytes',
        '1000',
        '--json',
      ],
      {
        PARCEL_RECON_API_KEYS: 'only=KEY',
        PARCEL_RECON_BASE_URL: url,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as ImagesSummary;
    expect(summary.downloads).toEqual({ saved: 4, refused: 2, refusedByCode: { TOO_LARGE: 2 }, ...ALL_WRITTEN });
    const written = (await filesUnder(workspace.dir)).filter((f) => !/\.duckdb(\.wal)?$/.test(f));
    for (const file of written) expect(file.startsWith(resolve(dir) + sep)).toBe(true);
    expect(written.map((f) => f.slice(resolve(dir).length + 1)).sort()).toEqual([
      '______escape-1.jpg',
      '______escape-2.bin',
      '______win-1.jpg',
      '______win-2.bin',
    ]);
    const stored = await workspace.query<{
      order_code: string;
      no: number;
      downloaded_path: string | null;
      download_error: string | null;
    }>('SELECT order_code, no, downloaded_path, download_error FROM order_images ORDER BY order_code, no');
    expect(stored.filter((row) => row.no === 3).map((row) => row.download_error)).toEqual([
      'TOO_LARGE: the file is over 1000 bytes',
      'TOO_LARGE: the file is over 1000 bytes',
    ]);
    expect(new Set(stored.map((row) => row.order_code))).toEqual(new Set(['../../escape', '..\\..\\win']));
  });
});
