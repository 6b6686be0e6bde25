import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { SCHEMA_VERSION } from '../../src/warehouse/migrations.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { DAY_MS, httpPost, keysOf, postControl, startTestSandbox } from '../sandbox/sandbox-http.js';
import { queryWarehouse, startReceiverProcess } from '../support/callback-receiver-process.js';
import { cli as runCli, startCli } from '../support/cli-process.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

interface JobSummary {
  runId: string;
  carrierDay: string;
  exitCode: number;
  exitState: string;
  counts: { codesRead: number; lookedUpOk: number; carrierErrors: number; lookupsSpent: number };
  steps: { step: string; exitCode: number; summary: Record<string, unknown> }[];
  summaryFile: string;
  alerts?: { channel: string; delivered: boolean; reason: string | null }[];
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('jobs run nightly', () => {
  let sandbox: RunningSandbox;
  let workspace: TrackingWorkspace;
  let env: Record<string, string>;
  let config: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ ordersPerAccount: 30 });
    workspace = await trackingWorkspace();
    const rows: string[][] = [['order_code', 'account']];
    for (const account of sandbox.state.world.accounts)
      for (let i = 0; i < 30; i++) rows.push([sandbox.state.world.orderCode(account.index, i), account.alias]);
    const csv = await workspace.writeCsv('orders.csv', rows);
    config = join(workspace.dir, 'parcel-recon.config.json');
    await writeFile(
      config,
      JSON.stringify({
        warehouse: workspace.dbPath,
        trackingUrl: sandbox.url,
        source: { inputs: [csv] },
        track: { concurrency: 8, retryMinMs: 5, refreshTerminal: false },
        jobs: { nightly: { schedule: '0 2 * * *' } },
      }),
    );
    env = {
      PARCEL_RECON_API_KEYS: Object.entries(keysOf(sandbox))
        .map(([alias, key]) => `${alias}=${key}`)
        .join(','),
    };
  });

  afterAll(async () => {
    await sandbox.stop();
    await workspace.dispose();
  });

  const nowEnv = () => ({ ...env, PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString() });

  it('runs on two simulated nights, each with a summary whose counts match the warehouse, sent to the notification URL', async () => {
    // Every night posts, ok ones too, when the configuration asks for them.
    const nightsConfig = join(workspace.dir, 'notify-nights.config.json');
    await writeFile(
      nightsConfig,
      JSON.stringify({ ...JSON.parse(await readFile(config, 'utf8')), notify: { on: ['ok', 'partial', 'failed'] } }),
    );
    const notified: { summary: unknown }[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        notified.push(JSON.parse(body));
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const notifyUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const summaries: JobSummary[] = [];
    for (let nightIndex = 0; nightIndex < 2; nightIndex++) {
      if (nightIndex > 0) await postControl(sandbox, '/_sandbox/clock', { advanceMs: DAY_MS });
      const result = await runCli(['jobs', 'run', 'nightly', '--config', nightsConfig, '--json'], {
        ...nowEnv(),
        PARCEL_RECON_NOTIFY_URL: notifyUrl,
      });
      expect(result.stderr).not.toMatch(/unexpected failure/);
      expect(result.code).toBe(0);
      // Both reports, right after the night's run, for the period of 30 carrier days ending with its day.
      const night = JSON.parse(result.stdout) as JobSummary;
      const from = new Date(Date.parse(`${night.carrierDay}T00:00:00Z`) - 29 * DAY_MS).toISOString().slice(0, 10);
      const charges = night.steps.find((s) => s.step === 'charges report')!.summary as {
        files: { table: string; path: string; rows: number }[];
      };
      const failures = night.steps.find((s) => s.step === 'failures report')!.summary as {
        files: { table: string; path: string; rows: number }[];
      };
      const chargesFile = charges.files.find((f) => f.table === 'charges')!;
      expect(chargesFile.path).toBe(
        join(workspace.dir, 'reports', 'nightly', `charges_${from}_${night.carrierDay}.csv`),
      );
      const [inRange] = await workspace.query<{ n: string }>(
        `SELECT count(*) AS n FROM orders WHERE CAST(order_date + INTERVAL 7 HOUR AS DATE) BETWEEN DATE '${from}' AND DATE '${night.carrierDay}'`,
      );
      expect(chargesFile.rows).toBe(Number(inRange!.n));
      expect((await readFile(chargesFile.path, 'utf8')).trim().split('\n')).toHaveLength(chargesFile.rows + 1);
      const byReason = failures.files.find((f) => f.table === 'failures-by-reason')!;
      expect(byReason.path).toBe(
        join(workspace.dir, 'reports', 'nightly', `failures-by-reason_${from}_${night.carrierDay}.csv`),
      );
      const [reasons] = await workspace.query<{ n: string }>(
        `SELECT count(DISTINCT coalesce(delay_code, '?')) AS n FROM delivery_failures WHERE CAST(attempted_at + INTERVAL 7 HOUR AS DATE) BETWEEN DATE '${from}' AND DATE '${night.carrierDay}'`,
      );
      expect(byReason.rows).toBe(Number(reasons!.n));
      const page = (night.steps.find((s) => s.step === 'html report')!.summary as { files: { path: string }[] })
        .files[0]!.path;
      expect(page).toBe(join(workspace.dir, 'reports', 'nightly', `report_${from}_${night.carrierDay}.html`));
      expect(await readFile(page, 'utf8')).toMatch(/^<!DOCTYPE html>/i);
      summaries.push(night);
    }
    await new Promise((resolve) => receiver.close(resolve));
    // The alert carries the summary as it was before the alert went; the summary then records its delivery.
    expect(notified.map((body) => body.summary)).toEqual(summaries.map(({ alerts: _alerts, ...sent }) => sent));
    for (const summary of summaries)
      expect(summary.alerts).toEqual([expect.objectContaining({ channel: 'webhook', delivered: true, reason: null })]);
    expect(summaries.map((s) => s.carrierDay)).toEqual(['2026-11-20', '2026-11-21']);
    for (const summary of summaries) {
      expect(JSON.parse(await readFile(summary.summaryFile, 'utf8'))).toEqual(summary);
      const track = summary.steps.find((s) => s.step === 'track')!;
      const trackRunId = track.summary.runId as string;
      const [jobRow] = await workspace.query<Record<string, unknown>>(
        `SELECT * FROM runs WHERE run_id = '${summary.runId}'`,
      );
      const [trackRow] = await workspace.query<Record<string, unknown>>(
        `SELECT * FROM runs WHERE run_id = '${trackRunId}'`,
      );
      const [results] = await workspace.query<Record<string, string>>(
        `SELECT count(*) FILTER (WHERE outcome = 'ok') AS ok, count(*) FILTER (WHERE outcome = 'carrier_error') AS carrier_errors FROM lookup_results WHERE run_id = '${trackRunId}'`,
      );
      expect(jobRow).toMatchObject({ job: 'nightly', exit_state: 'ok', exit_code: 0 });
      expect(trackRow).toMatchObject({ job: 'nightly-track' });
      for (const column of [
        'codes_read',
        'looked_up_ok',
        'carrier_errors',
        'transport_errors',
        'deferred',
        'lookups_spent',
      ]) {
        expect(jobRow![column]).toEqual(trackRow![column]);
      }
      expect(String(summary.counts.lookedUpOk)).toBe(results!.ok);
      expect(String(summary.counts.carrierErrors)).toBe(results!.carrier_errors);
      expect(summary.counts.codesRead).toBe(90);
    }
    // The second night skips the orders that became terminal on the first.
    const [terminal] = await workspace.query<{ n: string }>(
      `SELECT count(*) AS n FROM lookup_results l JOIN runs r USING (run_id) WHERE r.job = 'nightly-track' AND r.carrier_day = '2026-11-20' AND l.outcome = 'ok' AND l.order_code IN (SELECT order_code FROM orders WHERE is_terminal AND last_seen_at < '2026-11-21T00:00:00+07')`,
    );
    expect(summaries[1]!.counts.lookupsSpent).toBe(summaries[0]!.counts.lookupsSpent - Number(terminal!.n));
  });

  it("applies the configuration's retention after tracking: an old run's rows and raw spool go, then the warehouse is compacted", async () => {
    const dbPath = join(workspace.dir, 'retention.duckdb');
    const dataDir = join(workspace.dir, 'retention');
    const account = sandbox.state.world.accounts[0]!;
    const csv = await workspace.writeCsv('retention.csv', [
      ['order_code', 'account'],
      [sandbox.state.world.orderCode(account.index, 0), account.alias],
    ]);
    const old = new Date(sandbox.state.clock.now() - 120 * DAY_MS).toISOString();
    const seed = await Warehouse.open(dbPath);
    try {
      await seed.run(
        `INSERT INTO runs (run_id, job, source, started_at, finished_at, carrier_day, exit_state)
         VALUES ('old-night', 'nightly-track', 'x.csv', $old::TIMESTAMPTZ, $old::TIMESTAMPTZ, CAST($old::TIMESTAMPTZ AS DATE), 'ok')`,
        { old },
      );
      await seed.run(
        `INSERT INTO run_inputs SELECT '247express', 'old-night', i, 'OLD' || i, 'shop1', NULL, NULL, NULL FROM range(50000) AS r(i);
         INSERT INTO lookup_results SELECT '247express', 'old-night', 'OLD' || i, 'shop1', 'ok', NULL, NULL, 1, NULL, TIMESTAMPTZ '2026-07-01 00:00:00+00'
           FROM range(50000) AS r(i);
         INSERT INTO lookup_results SELECT '247express', 'old-night-2', 'OLD' || i, 'shop1', 'ok', NULL, NULL, 1, NULL, TIMESTAMPTZ '2026-07-02 00:00:00+00'
           FROM range(50000) AS r(i);
         INSERT INTO runs (run_id, job, source, started_at, finished_at, carrier_day, exit_state)
           SELECT 'old-night-2', job, source, started_at + INTERVAL 1 DAY, finished_at + INTERVAL 1 DAY, carrier_day + 1, exit_state
           FROM runs WHERE run_id = 'old-night'`,
      );
    } finally {
      await seed.close();
    }
    await mkdir(join(dataDir, 'raw', 'old-night'), { recursive: true });
    await writeFile(join(dataDir, 'raw', 'old-night', '0000000000000-1-000000001.ndjson.gz'), 'x');
    const jobConfig = join(workspace.dir, 'retention.config.json');
    await writeFile(
      jobConfig,
      JSON.stringify({
        warehouse: dbPath,
        dataDir,
        trackingUrl: sandbox.url,
        source: { inputs: [csv] },
        retention: { olderThan: '90d', compact: true },
      }),
    );
    const result = await runCli(['jobs', 'run', 'nightly', '--config', jobConfig, '--json'], nowEnv());
    expect(result.code, result.stderr).toBe(0);
    const night = JSON.parse(result.stdout) as JobSummary;
    expect(night.steps.map((s) => s.step)).toEqual([
      'track',
      'retention',
      'charges report',
      'failures report',
      'html report',
    ]);
    expect(night.steps[1]!.summary).toMatchObject({
      runsPruned: 2,
      rows: { run_inputs: 50000, lookup_results: 50000 },
      rawSpool: { folders: 1 },
    });
    expect(existsSync(join(dataDir, 'raw', 'old-night'))).toBe(false);
    expect(existsSync(`${dbPath}.compacting`)).toBe(false);
    // The night's own rows grow the file before it is compacted, so the compaction is judged by its own before and after.
    const compacted = result.stderr
      .split('\n')
      .filter((line) => line.includes('compacted the warehouse'))
      .map((line) => JSON.parse(line) as { bytesBefore: number; bytesAfter: number });
    expect(compacted).toHaveLength(1);
    expect(compacted[0]!.bytesAfter).toBeLessThan(compacted[0]!.bytesBefore);
    expect((await stat(dbPath)).size).toBe(compacted[0]!.bytesAfter);
    const warehouse = await Warehouse.open(dbPath, { readOnly: true });
    try {
      const rows = (
        await warehouse.readAll(
          `SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM lookup_results WHERE run_id LIKE 'old-night%') AS old_lookups,
                  (SELECT count(*) FROM run_inputs WHERE run_id LIKE 'old-night%') AS old_inputs,
                  (SELECT count(*) FROM runs WHERE job = 'nightly' AND exit_state = 'ok') AS finished_jobs`,
        )
      ).getRowObjectsJson();
      // Each order's latest lookup stays: the second old night's.
      expect(rows).toEqual([{ runs: '4', old_lookups: '50000', old_inputs: '0', finished_jobs: '1' }]);
    } finally {
      await warehouse.close();
    }
  });

  it("exports the warehouse's Parquet snapshot as its last step when the configuration has export.to", async () => {
    const dbPath = join(workspace.dir, 'export.duckdb');
    const snapshot = join(workspace.dir, 'export-snap');
    const account = sandbox.state.world.accounts[0]!;
    const csv = await workspace.writeCsv('export.csv', [
      ['order_code', 'account'],
      ...[0, 1, 2].map((i) => [sandbox.state.world.orderCode(account.index, i), account.alias]),
    ]);
    const jobConfig = join(workspace.dir, 'export.config.json');
    await writeFile(
      jobConfig,
      JSON.stringify({
        warehouse: dbPath,
        dataDir: join(workspace.dir, 'export'),
        trackingUrl: sandbox.url,
        source: { inputs: [csv] },
        export: { to: snapshot },
      }),
    );
    const result = await runCli(['jobs', 'run', 'nightly', '--config', jobConfig, '--json'], nowEnv());
    expect(result.code, result.stderr).toBe(0);
    const night = JSON.parse(result.stdout) as JobSummary;
    expect(night.steps.map((s) => s.step)).toEqual([
      'track',
      'charges report',
      'failures report',
      'html report',
      'export',
    ]);
    expect(night.steps[4]!.summary).toMatchObject({ to: snapshot, schemaVersion: SCHEMA_VERSION, rows: { orders: 3 } });
    const rows = await runCli(
      ['sql', 'SELECT count(*) AS orders FROM orders', '--snapshot', snapshot, '--format', 'csv'],
      {},
    );
    expect(rows.code, rows.stderr).toBe(0);
    expect(rows.stdout).toBe('orders\n3\n');
    // Exported before the job ends: its own run is still running in the snapshot.
    const runs = await runCli(
      ['sql', 'SELECT job, exit_state FROM runs ORDER BY job', '--snapshot', snapshot, '--format', 'csv'],
      {},
    );
    expect(runs.stdout).toBe('job,exit_state\nnightly,running\nnightly-track,ok\n');
  });

  it("loads the callback journal the receiver keeps in the configuration's dataDir, not beside the warehouse", async () => {
    const dbPath = join(workspace.dir, 'journal.duckdb');
    const dataDir = join(workspace.dir, 'journal-data');
    const journalDir = join(dataDir, 'callbacks');
    const account = sandbox.state.world.accounts[0]!;
    const orderCode = sandbox.state.world.orderCode(account.index, 0);
    const receiver = await startReceiverProcess(
      ['--db', join(workspace.dir, 'receiver.duckdb'), '--journal-dir', journalDir, '--ingest-interval-ms', '600000'],
      env,
    );
    try {
      const answer = await httpPost(
        `${receiver.url}/IntergrationAPI`,
        JSON.stringify({
          Time: '2026-11-21T05:00:00.1234567+07:00',
          TransactionId: 'DATA-DIR-1',
          Status: '25',
          StatusName: 'DANGDIPHAT',
          OrderCode: orderCode,
          ApiKey: keysOf(sandbox)[account.alias],
        }),
      );
      expect(answer.status).toBe(200);
    } finally {
      // Killed: the journal keeps the callback for the job to load.
      await receiver.kill();
    }
    const csv = await workspace.writeCsv('journal.csv', [
      ['order_code', 'account'],
      [orderCode, account.alias],
    ]);
    const jobConfig = join(workspace.dir, 'journal.config.json');
    await writeFile(
      jobConfig,
      JSON.stringify({ warehouse: dbPath, dataDir, trackingUrl: sandbox.url, source: { inputs: [csv] } }),
    );
    const result = await runCli(['jobs', 'run', 'nightly', '--config', jobConfig, '--json'], nowEnv());
    expect(result.code, result.stderr).toBe(0);
    const night = JSON.parse(result.stdout) as JobSummary;
    expect(night.steps[0]).toMatchObject({ step: 'callbacks', summary: { journalDir, newEvents: 1 } });
    const events = await queryWarehouse<{ transaction_id: string }>(
      dbPath,
      'SELECT transaction_id FROM callback_events',
    );
    expect(events).toEqual([{ transaction_id: 'DATA-DIR-1' }]);
  });

  /**
   * A nightly job into a warehouse of its own, with `track.memoryLimit` set to `memoryLimit`, over one
   * order and `otherCodes` codes more (of orders the carrier does not have).
   */
  async function nightlyWithTrackMemory(name: string, memoryLimit: string, otherCodes = 0) {
    const dbPath = join(workspace.dir, `${name}.duckdb`);
    const account = sandbox.state.world.accounts[0]!;
    const others = Array.from({ length: otherCodes }, (_, i) => [`247MEM${String(i).padStart(6, '0')}`, account.alias]);
    const csv = await workspace.writeCsv(`${name}.csv`, [
      ['order_code', 'account'],
      [sandbox.state.world.orderCode(account.index, 0), account.alias],
      ...others,
    ]);
    const jobConfig = join(workspace.dir, `${name}.config.json`);
    await writeFile(
      jobConfig,
      JSON.stringify({
        warehouse: dbPath,
        dataDir: join(workspace.dir, name),
        trackingUrl: sandbox.url,
        source: { inputs: [csv] },
        track: { memoryLimit },
      }),
    );
    const result = await runCli(['jobs', 'run', 'nightly', '--config', jobConfig, '--json'], nowEnv());
    const warehouse = await Warehouse.open(dbPath, { readOnly: true });
    try {
      const runs = (
        await warehouse.readAll(
          'SELECT job, exit_state, CAST(looked_up_ok AS INTEGER) AS looked_up_ok FROM runs ORDER BY job',
        )
      ).getRowObjectsJson();
      return { result, runs };
    } finally {
      await warehouse.close();
    }
  }

  it("runs its tracking step on track's one DuckDB thread: within 48MB, less than two threads' JSON buffers take", async () => {
    const { result, runs } = await nightlyWithTrackMemory('one-thread', '48MB');
    expect(result.stderr).not.toMatch(/out of memory|unexpected failure/);
    expect(result.code).toBe(0);
    expect(runs).toEqual([
      { job: 'nightly', exit_state: 'ok', looked_up_ok: 1 },
      { job: 'nightly-track', exit_state: 'ok', looked_up_ok: 1 },
    ]);
  });

  it("gives its tracking step the configuration's track.memoryLimit, and the rest of the job the general limit", async () => {
    const { result, runs } = await nightlyWithTrackMemory('small-memory', '10MB', 10_000);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      /^parcel-recon: DuckDB ran out of memory \(.*9\.5 MiB.*\): raise track\.memoryLimit in the configuration$/,
    );
    expect(result.stderr).not.toContain('    at ');
    // The job opened the warehouse and recorded how it ended at the general limit; at 10MB the tracking
    // step may fail before its own run row commits.
    expect(runs[0]).toEqual({ job: 'nightly', exit_state: 'failed', looked_up_ok: 0 });
    expect(
      runs
        .slice(1)
        .every((run) => run.job === 'nightly-track' && run.exit_state === 'failed' && run.looked_up_ok === 0),
    ).toBe(true);
  });

  it('refuses a second run while one holds the lock, and takes over the lock after SIGKILL', async () => {
    await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 1_000, latencyMaxMs: 1_200 });
    try {
      const lockFile = join(workspace.dir, 'locks', 'nightly.lock');
      const first = startCli(['jobs', 'run', 'nightly', '--config', config], { ...nowEnv() });
      await waitFor(() => existsSync(lockFile), 20_000);
      const holder = JSON.parse(await readFile(lockFile, 'utf8')) as { pid: number };
      expect(holder.pid).toBe(first.pid);

      const started = Date.now();
      const second = await runCli(['jobs', 'run', 'nightly', '--config', config], nowEnv());
      expect(second.code).toBe(5);
      expect(second.stderr).toMatch(
        new RegExp(`^parcel-recon: job nightly is already running \\(PID ${first.pid} on .+, since .+\\)\\n$`),
      );
      expect(Date.now() - started).toBeLessThan(10_000);

      first.kill('SIGKILL');
      await first.ended;
      expect(first.signalCode).toBe('SIGKILL');
      expect(existsSync(lockFile)).toBe(true);

      await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 0, latencyMaxMs: 0 });
      const third = await runCli(['jobs', 'run', 'nightly', '--config', config, '--json'], nowEnv());
      expect(third.code).toBe(0);
      expect(third.stderr).toMatch(/took over the lock of a run that was killed/);
      expect(existsSync(lockFile)).toBe(false);
      const files = await readdir(join(workspace.dir, 'jobs', 'nightly'));
      expect(files).toContain(`${(JSON.parse(third.stdout) as JobSummary).runId}.json`);
    } finally {
      await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 0, latencyMaxMs: 0 });
    }
  });
});
