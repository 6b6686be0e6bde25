/**
 * Report run times over a large warehouse: builds a synthetic warehouse of `--orders` orders in SQL
 * (generate_series: charges that follow the published relations with 1% anomalies, price lines,
 * five statuses each, failed attempts on a third of the orders, quotes for half, a partner CSV of every
 * order), then times `parcel-recon report charges|failures|reconcile` in each `--formats` as a child
 * process, the way cron runs it (read-only open, files written, summary printed).
 *
 * Prints one JSON line on stdout and a readable line per run on stderr; exits 1 when a report takes
 * more than `--target` seconds, 2 on a bad flag.
 *
 *   npm run bench:reports -- --orders 1000000 --formats csv,parquet,json --target 10
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { Warehouse } from '../src/warehouse/warehouse.js';

const run = promisify(execFile);
const CLI = join(import.meta.dirname, '../src/cli/main.js');
const REPORTS = ['charges', 'failures', 'reconcile'] as const;
const FORMATS = ['csv', 'parquet', 'json'] as const;

function readSettings(): { orders: number; formats: string[]; target: number; keep: boolean } {
  const { values } = parseArgs({
    options: {
      orders: { type: 'string', default: process.env.BENCH_ORDERS ?? '1000000' },
      formats: { type: 'string', default: 'csv,parquet,json' },
      target: { type: 'string', default: '10' },
      keep: { type: 'boolean', default: false },
    },
  });
  const orders = Number(values.orders);
  const target = Number(values.target);
  const formats = values.formats.split(',');
  if (!Number.isInteger(orders) || orders <= 0) fail(`--orders: not a positive integer: ${values.orders}`);
  if (!(target > 0)) fail(`--target: not a positive number: ${values.target}`);
  for (const f of formats) if (!(FORMATS as readonly string[]).includes(f)) fail(`--formats: unknown format ${f} (csv, parquet, json)`);
  return { orders, formats, target, keep: values.keep };
}

function fail(message: string): never {
  process.stderr.write(`reports bench: ${message}\n`);
  process.exit(2);
}

/** The synthetic warehouse, all in SQL: order i's charges follow the published relations unless i % 100 = 0. */
async function buildWarehouse(path: string, orders: number, partnerCsv: string): Promise<void> {
  const warehouse = await Warehouse.open(path, { memoryLimit: '4GB' });
  try {
    const statements = [
      `CREATE TEMP TABLE synthetic AS
       SELECT i, 'EX' || lpad(CAST(i AS VARCHAR), 9, '0') AS order_code, 'shop-' || (i % 5) AS account_alias,
              TIMESTAMPTZ '2026-10-01 00:00:00+07' + to_seconds(i % (60 * 86400)) AS accept_date,
              CASE WHEN i % 37 = 0 THEN '18' WHEN i % 11 = 0 THEN '28' WHEN i % 10 = 3 THEN '16' WHEN i % 10 = 4 THEN '25' ELSE '30' END AS status,
              10 + i % 50 AS length, 10 + i % 40 AS width, 5 + i % 30 AS height, (i % 300) / 10 + 0.1 AS real_weight,
              CAST(30000 + (i % 50) * 1000 AS DECIMAL(20,4)) AS main, i % 7 = 0 AS far, i % 11 = 0 AS returned
       FROM generate_series(1, ${orders}) AS t(i)`,
      `INSERT INTO orders (order_code, account_alias, accept_date, status, status_name, delay_code, delay_note, length, width, height, real_weight, cal_weight, weight,
         price, price_fr, far_region_fee_amount, fuel_fee_amount, vat_amount, total_service_cost, cod_amount, is_terminal, first_seen_at, last_seen_at, last_run_id)
       SELECT order_code, account_alias, accept_date, status, 'STATUS' || status,
              CASE WHEN status = '16' THEN lpad(CAST(1 + i % 40 AS VARCHAR), 2, '0') END, CASE WHEN status = '16' THEN 'Người nhận hẹn lại' END,
              length, width, height, real_weight, round(length * width * height / 6000, 2), greatest(real_weight, round(length * width * height / 6000, 2)),
              main, fr, far_fee, fuel, vat, main + fr + far_fee + fuel + vat + CASE WHEN i % 100 = 0 THEN 1000 ELSE 0 END, (i % 4) * 50000,
              status IN ('18', '28', '30'), accept_date, accept_date + INTERVAL 3 DAY, 'bench'
       FROM (SELECT *, CASE WHEN far THEN main * 0.2 ELSE 0 END AS far_fee, CASE WHEN returned THEN main * 0.5 ELSE 0 END AS fr, main * 0.2 AS fuel,
                    (main + CASE WHEN far THEN main * 0.2 ELSE 0 END + CASE WHEN returned THEN main * 0.5 ELSE 0 END + main * 0.2) * 0.1 AS vat
             FROM synthetic)`,
      `INSERT INTO order_charges
       SELECT order_code, row_number() OVER (PARTITION BY order_code ORDER BY k), service_id, service_name, cost FROM (
         SELECT order_code, 1 AS k, 'DE' AS service_id, 'Chuyển phát nhanh' AS service_name, price AS cost FROM orders
         UNION ALL SELECT order_code, 2, 'VSVX', 'Phụ phí vùng sâu vùng xa', far_region_fee_amount FROM orders WHERE far_region_fee_amount > 0
         UNION ALL SELECT order_code, 3, 'CH', 'Cước chuyển hoàn', price_fr FROM orders WHERE price_fr > 0
         UNION ALL SELECT order_code, 4, 'Fuel', 'Phụ phí xăng dầu', fuel_fee_amount FROM orders
         UNION ALL SELECT order_code, 5, 'VAT', 'Thuế VAT', vat_amount FROM orders)`,
      `INSERT INTO order_statuses
       SELECT order_code, k, accept_date + to_hours(k * 6), CASE k WHEN 1 THEN '21' WHEN 2 THEN '23' WHEN 3 THEN '24' WHEN 4 THEN '25'
              ELSE CASE WHEN status = '28' THEN '27' ELSE status END END, NULL, NULL, 'Hà Nội', 'Bưu cục ' || (i % 300)
       FROM synthetic, range(1, 6) AS r(k)`,
      `INSERT INTO delivery_failures
       SELECT order_code, accept_date + to_hours(20 + a * 24), lpad(CAST(1 + (i + a) % 40 AS VARCHAR), 2, '0'), 'Người nhận hẹn lại',
              'Tỉnh ' || (i % 63), 'Bưu cục ' || (i % 300), accept_date + to_hours(21 + a * 24), 'tracking', 'bench', NULL
       FROM synthetic, range(0, 2) AS r(a)
       WHERE i % 3 = 0 AND (a = 0 OR i % 9 = 0)`,
      `INSERT INTO price_quotes (quote_id, run_id, order_code, account_alias, to_province_name, to_district_name, to_ward_name, length, width, height,
         real_weight, client_hub_id, service_type_id, ok, total_service_cost, quoted_at)
       SELECT 'Q' || order_code, 'bench', order_code, account_alias, 'Hà Nội', 'Ba Đình', 'Phúc Xá', length, width, height, real_weight, 'HUB', 'DE', true,
              total_service_cost - price_fr * 1.1, accept_date
       FROM orders WHERE right(order_code, 1) IN ('0', '2', '4', '6', '8')`,
      `INSERT INTO order_changes
       SELECT order_code, 'total_service_cost', CAST(total_service_cost - 5000 AS VARCHAR), CAST(total_service_cost AS VARCHAR), accept_date + INTERVAL 4 DAY, 'bench'
       FROM orders WHERE status = '30' AND right(order_code, 3) = '777'`,
      `COPY (SELECT order_code, status AS expected_status,
                    CASE WHEN right(order_code, 2) = '13' THEN total_service_cost + 5000 ELSE total_service_cost END AS invoiced_amount, cod_amount
             FROM orders WHERE right(order_code, 2) <> '99') TO '${partnerCsv.replaceAll("'", "''")}' (FORMAT csv, HEADER)`,
      'DROP TABLE synthetic',
      'CHECKPOINT',
    ];
    for (const statement of statements) await warehouse.run(statement);
  } finally {
    await warehouse.close();
  }
}

async function main(): Promise<void> {
  const settings = readSettings();
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-bench-reports-'));
  try {
    const dbPath = join(dir, 'recon.duckdb');
    const partnerCsv = join(dir, 'partner.csv');
    const buildStarted = performance.now();
    await buildWarehouse(dbPath, settings.orders, partnerCsv);
    const buildSeconds = (performance.now() - buildStarted) / 1000;
    process.stderr.write(`built a warehouse of ${settings.orders} orders in ${buildSeconds.toFixed(1)} s\n`);
    const runs: { report: string; format: string; seconds: number; summary: unknown }[] = [];
    // Each report in each format, and the charges CSV of the flagged orders only (what finance opens in a spreadsheet).
    const variants = REPORTS.flatMap((report) => [
      ...settings.formats.map((format) => ({ report, format, extra: report === 'reconcile' ? ['--partner', partnerCsv] : [] })),
      ...(report === 'charges' && settings.formats.includes('csv') ? [{ report, format: 'csv', extra: ['--flagged-only'] }] : []),
    ]);
    for (const { report, format, extra } of variants) {
      const args = ['report', report, '--db', dbPath, '--format', format, '--out', join(dir, 'out', format), '--json', '--from', '2026-10-01', '--to', '2026-12-31', ...extra];
      const label = `${report}${extra.includes('--flagged-only') ? ' --flagged-only' : ''}`;
      const started = performance.now();
      const { stdout } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, PARCEL_RECON_NOW: '2026-12-05T12:00:00+07:00' }, maxBuffer: 64 << 20 });
      const seconds = (performance.now() - started) / 1000;
      const summary = JSON.parse(stdout) as { files: { table: string; rows: number }[] };
      runs.push({ report: label, format, seconds: Math.round(seconds * 100) / 100, summary: summary.files.map((f) => `${f.table} ${f.rows}`) });
      process.stderr.write(`${label.padEnd(25)} ${format.padEnd(8)} ${seconds.toFixed(2).padStart(7)} s  (${summary.files.map((f) => `${f.table} ${f.rows} rows`).join(', ')})\n`);
    }
    const slowest = Math.max(...runs.map((r) => r.seconds));
    const machine = { cpus: cpus().length, cpu: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadAverage: loadavg() };
    process.stdout.write(`${JSON.stringify({ orders: settings.orders, buildSeconds: Math.round(buildSeconds * 10) / 10, runs, slowest, target: settings.target, machine })}\n`);
    if (slowest > settings.target) process.exitCode = 1;
  } finally {
    if (!settings.keep) await rm(dir, { recursive: true, force: true });
    else process.stderr.write(`kept ${dir}\n`);
  }
}

await main();
