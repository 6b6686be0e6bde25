/**
 * Warehouse load throughput: the pipeline's loader against DuckDB's own bulk load of the same data.
 *
 * (a) pipeline: synthetic tracking answers as the carrier writes them (5 statuses, 6 trackings, 4 price
 *     lines each, plus one lookup result per answer) handed to the ResultBatcher as `track` hands
 *     them over, into a fresh warehouse: each answer's line written to the answer log as it comes
 *     (one write each), a transaction once `--batch` answers have gathered (the log file synced and
 *     read, the conversion of date-times and money, delivery failures, history rows, orders insert,
 *     charge audit rows, lookup results), the next batch gathering while one commits, up to
 *     MAX_BATCH_GROWTH times as large, and each committed batch's file compressed for keeping; the
 *     time ends once the last file is compressed and a CHECKPOINT has written every row into the
 *     warehouse file, as closing the run does (the rows a commit leaves in the WAL are written again
 *     there). The answers come without waiting, so the warehouse is what limits this run, as it is
 *     when `track`'s batches grow.
 * (b) engine: the same work as plain SQL in one transaction over DuckDB's own `read_json` of the same
 *     answer log lines, written once, uncompressed, to one file beforehand: the snapshots staged with
 *     the loader's conversions, then the statements the loader runs for a batch of new orders
 *     (delivery failures, history rows, orders with their status, charge audit rows; a batch of new
 *     orders has no change history to record), and the lookup_results rows, into a warehouse of the
 *     same schema and memory limit, then a CHECKPOINT. The ratio of (a) to (b) is what the pipeline
 *     adds: batching, the log's writes, sync and compression, the Node side.
 * (c) the loader alone: `loadLookupBatch`, one transaction per `--batch` answers, each batch's spool
 *     lines built and written before it loads, then a CHECKPOINT (reported beside the ratio, not judged).
 *
 * Every side runs DuckDB with `--threads` threads, by default as many as `track` gives it (one), and
 * the warehouse's default memory limit (512 MB), under which the loader reads a batch's file with
 * read_json as the engine does; under `track`'s 64 MB it reads the file as lines (spoolReaderFor).
 *
 * Each of `--rounds` rounds runs the loads afresh; the best run of each is compared, as the one least
 * disturbed by other load on the machine (the median is reported too). Prints one JSON line on stdout
 * and a readable line on stderr; exits 1 when the pipeline takes more than `--target` times the
 * engine's time, 2 on a bad flag.
 *
 *   npm run bench:load -- --snapshots 100000 --batch 5000 --rounds 3 --target 1.2 [--threads 1]
 *   BENCH_SNAPSHOTS=20000 npm run bench:load
 */
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EXPRESS_247 } from '../src/carriers/247express/carrier.js';
import {
  epochMsToInstant,
  formatCarrierDateTime,
  shareOfMoney,
  sumMoney,
  type TrackingSnapshotWire,
} from '../src/carriers/247express/contract.js';
import type { JsonFields } from '../src/carriers/answer-sql.js';
import { DEFAULT_CARRIER_ID } from '../src/carriers/known-carriers.js';
import { ResultBatcher } from '../src/pipeline/tracking/result-batcher.js';
import { TRACKING_WAREHOUSE_OPTIONS } from '../src/pipeline/tracking/tracking-warehouse-options.js';
import { spoolFileRows } from '../src/warehouse/ndjson-spool.js';
import {
  type LookupBatch,
  type LookupResultRow,
  loadLookupBatch,
  type SpooledAnswer,
  STAGED_SNAPSHOTS,
  spooledSnapshot,
  stagedSnapshotsSelect,
  storeStagedSnapshots,
} from '../src/warehouse/snapshot-loader.js';
import { answerSpoolLineStart, spoolLineFields } from '../src/warehouse/snapshot-spool-format.js';
import { sqlText } from '../src/warehouse/sql-literals.js';
import { Warehouse } from '../src/warehouse/warehouse.js';

const RUN_ID = 'bench-run';
const START_MS = Date.parse('2026-11-01T00:00:00Z');
const HOUR_MS = 3_600_000;

interface BenchSettings {
  snapshots: number;
  batch: number;
  rounds: number;
  target: number;
  /** DuckDB's threads, the same on every side: by default `track`'s. */
  threads: number;
}

function readSettings(): BenchSettings {
  const { values } = parseArgs({
    options: {
      snapshots: { type: 'string', default: process.env.BENCH_SNAPSHOTS ?? '100000' },
      batch: { type: 'string', default: process.env.BENCH_BATCH ?? '5000' },
      rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '3' },
      target: { type: 'string', default: '1.2' },
      threads: { type: 'string', default: String(TRACKING_WAREHOUSE_OPTIONS.threads) },
    },
  });
  const positive = (flag: string, text: string, integer: boolean): number => {
    const value = Number(text);
    if (!(value > 0) || (integer && !Number.isInteger(value))) {
      process.stderr.write(
        `warehouse-load: --${flag}: not a positive ${integer ? 'integer' : 'number'}: ${JSON.stringify(text)}\n`,
      );
      process.exit(2);
    }
    return value;
  };
  return {
    snapshots: positive('snapshots', values.snapshots, true),
    batch: positive('batch', values.batch, true),
    rounds: positive('rounds', values.rounds, true),
    target: positive('target', values.target, false),
    threads: positive('threads', values.threads, true),
  };
}

// ---------------------------------------------------------------------------------------------
// Synthetic answers, as the carrier sends them
// ---------------------------------------------------------------------------------------------

/** mulberry32: a small seeded generator, so every run loads the same data. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PROVINCES = [
  ['79', 'Hồ Chí Minh', 'HCM01', 'Bưu cục Tân Bình'],
  ['01', 'Hà Nội', 'HN05', 'Bưu cục Cầu Giấy'],
  ['48', 'Đà Nẵng', 'DN02', 'Bưu cục Hải Châu'],
  ['92', 'Cần Thơ', 'CT01', 'Bưu cục Ninh Kiều'],
] as const;
const STATUS_PATH = [
  ['21', 'DATIEPNHAN', 'Đã tiếp nhận'],
  ['23', 'DALAYHANG', 'Đã lấy hàng'],
  ['24', 'DANGVANCHUYEN', 'Đang vận chuyển'],
  ['25', 'DANGDIPHAT', 'Đang đi phát'],
] as const;
const LAST_STATUSES = [
  ['30', 'PHATTHANHCONG', 'Phát thành công'],
  ['16', 'CHOXULY', 'Chờ xử lý'],
  ['27', 'CHOCHUYENHOAN', 'Chờ chuyển hoàn'],
] as const;
const STEPS = [
  ['0', 'Nhập hệ thống'],
  ['2', 'Đóng túi'],
  ['3', 'Đang chuyển tiếp'],
  ['4', 'Đến bưu cục'],
  ['10', 'Giao bưu tá đi phát'],
  ['5', 'Đang phát'],
] as const;

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)] as T;
}

function syntheticAnswer(index: number, random: () => number): TrackingSnapshotWire {
  const [fromId, fromProvince, fromOfficeId, fromOffice] = pick(PROVINCES, random);
  const [toId, toProvince, toOfficeId, toOffice] = pick(PROVINCES, random);
  const acceptMs = START_MS + Math.floor(random() * 30 * 24) * HOUR_MS;
  const [lastCode, lastName, lastDisplay] = pick(LAST_STATUSES, random);
  const failed = lastCode === '16';
  const length = 10 + Math.floor(random() * 50);
  const width = 10 + Math.floor(random() * 50);
  const height = 5 + Math.floor(random() * 40);
  const realWeight = Math.round(random() * 30_000) / 1000;
  const calWeight = (length * width * height) / 6000;
  const main = 15_000 + Math.floor(random() * 200) * 500;
  const farRegion = random() < 0.3 ? 20_000 : 0;
  const fuel = Number(shareOfMoney(main, '0.2'));
  const vat = Number(shareOfMoney(sumMoney([main, farRegion, fuel]), '0.1'));
  const statusRows = [...STATUS_PATH, [lastCode, lastName, lastDisplay] as const].map(
    ([status, statusName, trackingName], i) => ({
      time: formatCarrierDateTime(acceptMs + i * 9 * HOUR_MS),
      status,
      statusName,
      trackingName,
      provinceName: i < 2 ? fromProvince : toProvince,
      postOfficeName: i < 2 ? fromOffice : toOffice,
    }),
  );
  const trackingRows = STEPS.map(([statusID, statusName], i) => ({
    statusID,
    statusName,
    postOfficeID: i < 3 ? fromOfficeId : toOfficeId,
    postOfficeName: i < 3 ? fromOffice : toOffice,
    provinceID: i < 3 ? fromId : toId,
    provinceName: i < 3 ? fromProvince : toProvince,
    dateChange: formatCarrierDateTime(acceptMs + i * 7 * HOUR_MS),
    notes: i === 2 ? `Chuyến xe ${index % 97}` : null,
  }));
  return {
    errorMessage: null,
    errorCode: null,
    orderCode: `BENCH${String(index).padStart(9, '0')}`,
    externalCode: `SHOP-${index}`,
    acceptDate: formatCarrierDateTime(acceptMs),
    status: lastCode,
    statusName: lastName,
    trackingName: lastDisplay,
    delayCode: failed ? '13' : null,
    delayNote: failed ? 'Người nhận đi vắng' : null,
    deliveryNotes: lastCode === '30' ? 'Giao tận tay người nhận' : null,
    deliveryDate: lastCode === '30' ? formatCarrierDateTime(acceptMs + 40 * HOUR_MS) : null,
    poDeliveryID: null,
    mailMan: null,
    receiverName: 'Nguyễn Thị Hương',
    serviceTypeID: 'DE',
    mailerTypeID: random() < 0.8 ? 'HH' : 'TL',
    extraServiceName: null,
    length,
    width,
    height,
    realWeight,
    calWeight,
    weight: Math.max(realWeight, calWeight),
    quantity: 1 + Math.floor(random() * 3),
    price: main,
    priceFR: 0,
    farRegionFeeAmount: farRegion,
    fuelFeeAmount: fuel,
    vatAmount: vat,
    totalServiceCost: Number(sumMoney([main, farRegion, fuel, vat])),
    edtFrom: null,
    edtTo: null,
    senderID: null,
    senderName: null,
    postOfficeAcceptID: null,
    codAmount: 0,
    priceInfo: [
      { serviceName: 'Chuyển phát nhanh', serviceID: 'DE', cost: main },
      { serviceName: 'Phụ phí vùng sâu vùng xa', serviceID: 'VSVX', cost: farRegion },
      { serviceName: 'Phụ phí xăng dầu', serviceID: 'Fuel', cost: fuel },
      { serviceName: 'Thuế GTGT', serviceID: 'VAT', cost: vat },
    ],
    statuses: statusRows,
    trackings: trackingRows,
    estimateRoutes: null,
    confirmImage: null,
  };
}

/** The answers of batch `batchNo`, the same on every call, as the lookups hand them over: JSON text as it came. */
function syntheticBatch(
  batchNo: number,
  settings: BenchSettings,
): { snapshots: SpooledAnswer[]; results: LookupResultRow[] } {
  const random = seededRandom(batchNo + 1);
  const first = batchNo * settings.batch;
  const count = Math.min(settings.batch, settings.snapshots - first);
  const seenAt = epochMsToInstant(START_MS + 40 * 24 * HOUR_MS + batchNo * 1000);
  const snapshots: SpooledAnswer[] = Array.from({ length: count }, (_, i) => {
    const answer = syntheticAnswer(first + i, random);
    return {
      orderCode: answer.orderCode,
      body: JSON.stringify(answer),
      accountAlias: `shop-${(first + i) % 7}`,
      seenAt,
      runId: RUN_ID,
    };
  });
  const results = snapshots.map((loaded) => ({
    runId: RUN_ID,
    orderCode: loaded.orderCode,
    accountAlias: loaded.accountAlias,
    outcome: 'ok' as const,
    errorCode: null,
    errorMessage: null,
    attempts: 1,
    origin: `bench:${loaded.orderCode}`,
    finishedAt: seenAt,
  }));
  return { snapshots, results };
}

// ---------------------------------------------------------------------------------------------
// The two measurements
// ---------------------------------------------------------------------------------------------

/** The tables a load writes, whose rows every side must agree on. */
const COUNTED_TABLES = [
  'orders',
  'order_charges',
  'order_statuses',
  'order_trackings',
  'order_charge_audit',
  'delivery_failures',
  'lookup_results',
] as const;

type TableRows = Record<(typeof COUNTED_TABLES)[number], number>;

/** Wall time, and CPU time of the process (DuckDB's threads included), which other load on the machine disturbs less. */
interface Timing {
  seconds: number;
  cpuSeconds: number;
}

async function timed(work: () => Promise<void>): Promise<Timing> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await work();
  const cpu = process.cpuUsage(cpuBefore);
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
}

/** Every answer of the run, as the lookups hand them to the batcher: the order code, the key's alias and the body's bytes. */
interface BenchAnswer {
  readonly orderCode: string;
  readonly accountAlias: string;
  readonly body: Buffer;
}

function allAnswers(settings: BenchSettings): BenchAnswer[] {
  const answers: BenchAnswer[] = [];
  for (let batchNo = 0; batchNo * settings.batch < settings.snapshots; batchNo++) {
    for (const answer of syntheticBatch(batchNo, settings).snapshots)
      answers.push({ orderCode: answer.orderCode, accountAlias: answer.accountAlias, body: Buffer.from(answer.body) });
  }
  return answers;
}

/**
 * The pipeline's load as `track` runs it: every answer handed to the ResultBatcher as it arrives (its
 * line written to the answer log at once), a batch committed once `--batch` have gathered, the next
 * gathering while it commits (up to MAX_BATCH_GROWTH times as many, when the warehouse is what limits
 * the run, as here where the answers come without waiting), until the last file is compressed and
 * the rows checkpointed.
 */
async function measurePipeline(
  dir: string,
  settings: BenchSettings,
  answers: readonly BenchAnswer[],
): Promise<Timing & { rows: TableRows }> {
  const warehouse = await Warehouse.open(join(dir, 'pipeline.duckdb'), { threads: settings.threads });
  try {
    const seenAt = START_MS + 40 * 24 * HOUR_MS;
    const batcher = new ResultBatcher(warehouse, RUN_ID, join(dir, 'spool'), dir, () => seenAt, DEFAULT_CARRIER_ID);
    const timing = await timed(async () => {
      // Each answer is of an order the fresh warehouse never held, as in a first run over new codes.
      for (const answer of answers) {
        batcher.add(
          answer.orderCode,
          answer.accountAlias,
          `bench:${answer.orderCode}`,
          { kind: 'ok', orderCode: answer.orderCode, body: answer.body, attempts: 1 },
          false,
        );
        if (batcher.shouldFlush(settings.batch)) await batcher.commitGathering();
      }
      await batcher.finish();
      await warehouse.run('CHECKPOINT');
    });
    return { ...timing, rows: await countRows((sql) => warehouse.readAll(sql)) };
  } finally {
    await warehouse.close();
  }
}

/** The loader alone, one transaction per `--batch` answers, each batch's spool lines built and written before it loads, then a CHECKPOINT. */
async function measureLoader(dir: string, settings: BenchSettings): Promise<Timing & { rows: TableRows }> {
  const warehouse = await Warehouse.open(join(dir, 'loader.duckdb'), { threads: settings.threads });
  try {
    const spoolDir = join(dir, 'spool');
    const total: Timing = { seconds: 0, cpuSeconds: 0 };
    for (let batchNo = 0; batchNo * settings.batch < settings.snapshots; batchNo++) {
      const { snapshots, results } = syntheticBatch(batchNo, settings);
      const timing = await timed(() => {
        const batch: LookupBatch = { snapshots: snapshots.map(spooledSnapshot), results };
        return loadLookupBatch(warehouse, batch, spoolDir);
      });
      total.seconds += timing.seconds;
      total.cpuSeconds += timing.cpuSeconds;
    }
    const checkpoint = await timed(() => warehouse.run('CHECKPOINT').then(() => undefined));
    total.seconds += checkpoint.seconds;
    total.cpuSeconds += checkpoint.cpuSeconds;
    return { ...total, rows: await countRows((sql) => warehouse.readAll(sql)) };
  } finally {
    await warehouse.close();
  }
}

/** Writes every answer's line as the answer log holds it (uncompressed) to one NDJSON file. */
async function writeEngineInput(path: string, settings: BenchSettings): Promise<{ longestLineBytes: number }> {
  const file = await open(path, 'w');
  let longestLineBytes = 0;
  try {
    for (let batchNo = 0; batchNo * settings.batch < settings.snapshots; batchNo++) {
      const lines = syntheticBatch(batchNo, settings).snapshots.map((answer) => {
        const lookup = {
          outcome: 'ok',
          askedCode: answer.orderCode,
          origin: `bench:${answer.orderCode}`,
          attempts: 1,
          errorCode: null,
          errorMessage: null,
        } as const;
        return `${answerSpoolLineStart(answer, lookup)}${answer.body}}`;
      });
      for (const line of lines) longestLineBytes = Math.max(longestLineBytes, Buffer.byteLength(line) + 1);
      await file.write(`${lines.join('\n')}\n`);
    }
  } finally {
    await file.close();
  }
  return { longestLineBytes };
}

/** The log lines' fields as DuckDB's own `read_json` reads them: the loader's, and a lookup_results row's. */
const LOG_LINE_FIELDS: JsonFields = {
  ...spoolLineFields(EXPRESS_247.snapshotMapping),
  orderCode: 'VARCHAR',
  outcome: 'VARCHAR',
  askedCode: 'VARCHAR',
  origin: 'VARCHAR',
  attempts: 'INTEGER',
  errorCode: 'VARCHAR',
  errorMessage: 'VARCHAR',
};

/** DuckDB's own `read_json` of the log's lines, as the loader reads them where memory allows. */
function readJsonLog(fileSql: string, longestLineBytes: number): string {
  return spoolFileRows(fileSql, { longestLineBytes }, LOG_LINE_FIELDS, 'json');
}

/** The pipeline's work on the same answers as plain SQL over `read_json`, in one transaction, then a CHECKPOINT. */
async function measureEngine(
  dir: string,
  inputFile: string,
  longestLineBytes: number,
  threads: number,
): Promise<Timing & { rows: TableRows }> {
  const warehouse = await Warehouse.open(join(dir, 'engine.duckdb'), { threads });
  try {
    const timing = await timed(async () => {
      await warehouse.transaction(async (sql) => {
        const snapshots = `(SELECT runId, accountAlias, seenAt, unnest(answer) FROM ${readJsonLog('$file', longestLineBytes)} WHERE outcome = 'ok')`;
        await sql.run(
          `CREATE TEMP TABLE ${STAGED_SNAPSHOTS} AS ${stagedSnapshotsSelect(snapshots, DEFAULT_CARRIER_ID)}`,
          {
            file: inputFile,
          },
        );
        await storeStagedSnapshots(sql, true);
        await sql.run(
          `INSERT INTO lookup_results
           SELECT ${sqlText(DEFAULT_CARRIER_ID)}, runId, askedCode, accountAlias, outcome, errorCode, errorMessage, attempts, origin, seenAt FROM ${readJsonLog('$file', longestLineBytes)}`,
          { file: inputFile },
        );
      });
      await warehouse.run('CHECKPOINT');
    });
    return { ...timing, rows: await countRows((sql) => warehouse.readAll(sql)) };
  } finally {
    await warehouse.close();
  }
}

async function countRows(
  readAll: (sql: string) => Promise<{ getRowObjectsJS(): Record<string, unknown>[] }>,
): Promise<TableRows> {
  const reader = await readAll(
    `SELECT ${COUNTED_TABLES.map((table) => `(SELECT count(*) FROM ${table}) AS ${table}`).join(', ')}`,
  );
  const row = reader.getRowObjectsJS()[0] ?? {};
  return Object.fromEntries(COUNTED_TABLES.map((table) => [table, Number(row[table])])) as TableRows;
}

function totalRows(rows: TableRows): number {
  return COUNTED_TABLES.reduce((sum, table) => sum + rows[table], 0);
}

/** The run least disturbed by the rest of the machine, and the middle one. */
function summarize(runs: readonly (Timing & { rows: TableRows })[], settings: BenchSettings) {
  const bySeconds = [...runs].sort((a, b) => a.seconds - b.seconds);
  const best = bySeconds[0] as Timing;
  const median = bySeconds[Math.floor((bySeconds.length - 1) / 2)] as Timing;
  const rows = totalRows((runs[0] as { rows: TableRows }).rows);
  return {
    seconds: round(best.seconds, 3),
    cpuSeconds: round(best.cpuSeconds, 3),
    snapshotsPerSecond: Math.round(settings.snapshots / best.seconds),
    rowsPerSecond: Math.round(rows / best.seconds),
    medianSeconds: round(median.seconds, 3),
    allSeconds: runs.map((run) => round(run.seconds, 3)),
  };
}

async function main(): Promise<void> {
  const settings = readSettings();
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-bench-load-'));
  try {
    const inputFile = join(dir, 'engine-input.ndjson');
    const { longestLineBytes } = await writeEngineInput(inputFile, settings);
    const answers = allAnswers(settings);
    const engineRuns: (Timing & { rows: TableRows })[] = [];
    const pipelineRuns: (Timing & { rows: TableRows })[] = [];
    const loaderRuns: (Timing & { rows: TableRows })[] = [];
    // Rounds alternate the loads, so a busy spell on the machine does not favour one of them.
    for (let roundNo = 0; roundNo < settings.rounds; roundNo++) {
      const roundDir = join(dir, `round-${roundNo}`);
      await mkdir(roundDir);
      engineRuns.push(await measureEngine(roundDir, inputFile, longestLineBytes, settings.threads));
      pipelineRuns.push(await measurePipeline(roundDir, settings, answers));
      loaderRuns.push(await measureLoader(roundDir, settings));
      await rm(roundDir, { recursive: true, force: true });
    }
    const expectedRows = JSON.stringify(engineRuns[0]?.rows);
    for (const run of [...engineRuns, ...pipelineRuns, ...loaderRuns]) {
      if (JSON.stringify(run.rows) !== expectedRows)
        throw new Error(`the loads disagree: ${JSON.stringify(run.rows)} against ${expectedRows}`);
    }
    const pipeline = summarize(pipelineRuns, settings);
    const loader = summarize(loaderRuns, settings);
    const engine = summarize(engineRuns, settings);
    const ratio = pipeline.seconds / engine.seconds;
    const report = {
      bench: 'warehouse-load',
      snapshots: settings.snapshots,
      batch: settings.batch,
      rounds: settings.rounds,
      threads: settings.threads,
      cpus: cpus().length,
      loadAverage: round(loadavg()[0] ?? 0, 2),
      rows: engineRuns[0]?.rows,
      pipeline,
      loader,
      engine,
      ratio: round(ratio, 2),
      medianRatio: round(pipeline.medianSeconds / engine.medianSeconds, 2),
      cpuRatio: round(pipeline.cpuSeconds / engine.cpuSeconds, 2),
      loaderRatio: round(loader.seconds / engine.seconds, 2),
      loaderCpuRatio: round(loader.cpuSeconds / engine.cpuSeconds, 2),
      target: settings.target,
      ok: ratio <= settings.target,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
    process.stderr.write(
      `warehouse-load: ${settings.snapshots} snapshots (${totalRows(engineRuns[0]?.rows as TableRows)} rows) in batches of ${settings.batch}, ${settings.threads} DuckDB thread(s), best of ${settings.rounds}: ` +
        `pipeline ${pipeline.seconds}s (${pipeline.snapshotsPerSecond} snapshots/s, ${pipeline.rowsPerSecond} rows/s), ` +
        `engine ${engine.seconds}s (${engine.snapshotsPerSecond} snapshots/s, ${engine.rowsPerSecond} rows/s), ` +
        `ratio ${report.ratio} (median ${report.medianRatio}, CPU time ${report.cpuRatio}; target ${settings.target}) ${report.ok ? 'OK' : 'OVER TARGET'}; ` +
        `the loader alone in transactions of ${settings.batch}: ${loader.seconds}s, ratio ${report.loaderRatio} (CPU time ${report.loaderCpuRatio})\n`,
    );
    process.exitCode = report.ok ? 0 : 1;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function round(value: number, digits: number): number {
  return Number(value.toFixed(digits));
}

await main();
