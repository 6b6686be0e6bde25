import type { CarrierInstant } from '../carriers/carrier-time.js';
import { SETTLING_ERROR_CODES } from '../carriers/known-carriers.js';
import { countOf, instantText } from './result-values.js';
import type { Warehouse } from './warehouse.js';
import { WarehouseError } from './warehouse-errors.js';

/** exit_state of a run that has started and not finished (or was cut off before it could finish). */
export const RUN_STATE_RUNNING = 'running';

export interface RunStart {
  readonly runId: string;
  /** The job's name, e.g. `track` or `nightly-reconciliation`. */
  readonly job: string;
  /** The source's description (never a password). */
  readonly source: string;
  readonly startedAt: CarrierInstant;
  /** The carrier day (YYYY-MM-DD) whose quota the run spends. */
  readonly carrierDay: string;
}

export interface RunCounts {
  readonly codesRead: number;
  readonly codesRejected: number;
  readonly codesDuplicate: number;
  readonly codesToLookUp: number;
  readonly lookedUpOk: number;
  readonly carrierErrors: number;
  readonly transportErrors: number;
  readonly deferred: number;
  readonly lookupsSpent: number;
}

export interface RunFinish {
  readonly finishedAt: CarrierInstant;
  readonly counts: RunCounts;
  readonly exitCode: number;
  /** e.g. `ok`, `partial`, `failed`, `quota_exhausted`. */
  readonly exitState: string;
  /** Anything JSON-serializable the run wants to keep. */
  readonly summary: unknown;
}

export interface RunRecord {
  readonly runId: string;
  readonly job: string;
  readonly source: string;
  readonly startedAt: CarrierInstant;
  readonly finishedAt: CarrierInstant | null;
  readonly carrierDay: string;
  /** Null until the run finishes. */
  readonly counts: RunCounts | null;
  readonly exitCode: number | null;
  readonly exitState: string;
  readonly summary: unknown;
}

/**
 * Records a run's start. Starting a run that already exists is a resume: the row is marked running
 * again and keeps its first start, job, source and carrier day.
 */
export async function startRun(warehouse: Warehouse, start: RunStart): Promise<void> {
  await warehouse.run(
    `INSERT INTO runs (run_id, job, source, started_at, carrier_day, exit_state)
     VALUES ($runId, $job, $source, $startedAt::TIMESTAMPTZ, $carrierDay::DATE, $running)
     ON CONFLICT (run_id) DO UPDATE SET finished_at = NULL, exit_code = NULL, exit_state = excluded.exit_state`,
    { ...start, running: RUN_STATE_RUNNING },
  );
}

/** Records how a run ended: its counts, exit code and state, and a JSON summary. */
export async function finishRun(warehouse: Warehouse, runId: string, finish: RunFinish): Promise<void> {
  const { counts } = finish;
  const changed = await warehouse.run(
    `UPDATE runs SET
       finished_at = $finishedAt::TIMESTAMPTZ,
       codes_read = $codesRead, codes_rejected = $codesRejected, codes_duplicate = $codesDuplicate,
       codes_to_look_up = $codesToLookUp, looked_up_ok = $lookedUpOk, carrier_errors = $carrierErrors,
       transport_errors = $transportErrors, deferred = $deferred, lookups_spent = $lookupsSpent,
       exit_code = $exitCode, exit_state = $exitState, summary = $summary::JSON
     WHERE run_id = $runId`,
    {
      runId,
      finishedAt: finish.finishedAt,
      codesRead: counts.codesRead,
      codesRejected: counts.codesRejected,
      codesDuplicate: counts.codesDuplicate,
      codesToLookUp: counts.codesToLookUp,
      lookedUpOk: counts.lookedUpOk,
      carrierErrors: counts.carrierErrors,
      transportErrors: counts.transportErrors,
      deferred: counts.deferred,
      lookupsSpent: counts.lookupsSpent,
      exitCode: finish.exitCode,
      exitState: finish.exitState,
      summary: JSON.stringify(finish.summary ?? null),
    },
  );
  if (changed === 0) throw new WarehouseError(`warehouse ${warehouse.path} has no run ${runId} to finish`);
}

/** Replaces a finished run's JSON summary: what it learned after it finished (a job's alert deliveries). */
export async function replaceRunSummary(warehouse: Warehouse, runId: string, summary: unknown): Promise<void> {
  await warehouse.run('UPDATE runs SET summary = $summary::JSON WHERE run_id = $runId', {
    runId,
    summary: JSON.stringify(summary),
  });
}

/** The run's row, or undefined when there is no such run. */
export async function readRun(warehouse: Warehouse, runId: string): Promise<RunRecord | undefined> {
  const reader = await warehouse.readAll(
    `SELECT run_id, job, source, ${instantText('started_at')} AS started_at, ${instantText('finished_at')} AS finished_at,
            CAST(carrier_day AS VARCHAR) AS carrier_day, codes_read, codes_rejected, codes_duplicate, codes_to_look_up,
            looked_up_ok, carrier_errors, transport_errors, deferred, lookups_spent, exit_code, exit_state, summary
     FROM runs WHERE run_id = $runId`,
    { runId },
  );
  const row = reader.getRowObjectsJS()[0];
  if (row === undefined) return undefined;
  const finishedAt = row.finished_at as CarrierInstant | null;
  return {
    runId: row.run_id as string,
    job: row.job as string,
    source: row.source as string,
    startedAt: row.started_at as CarrierInstant,
    finishedAt,
    carrierDay: row.carrier_day as string,
    counts:
      finishedAt === null
        ? null
        : {
            codesRead: countOf(row.codes_read),
            codesRejected: countOf(row.codes_rejected),
            codesDuplicate: countOf(row.codes_duplicate),
            codesToLookUp: countOf(row.codes_to_look_up),
            lookedUpOk: countOf(row.looked_up_ok),
            carrierErrors: countOf(row.carrier_errors),
            transportErrors: countOf(row.transport_errors),
            deferred: countOf(row.deferred),
            lookupsSpent: countOf(row.lookups_spent),
          },
    exitCode: row.exit_code as number | null,
    exitState: row.exit_state as string,
    summary: row.summary === null ? null : (JSON.parse(row.summary as string) as unknown),
  };
}

/**
 * The run of this job, carrier day and source that was cut off (its row still says running), if
 * any: the one a rerun resumes. Only one process writes the warehouse, so such a row belongs to a
 * process that is gone.
 */
export async function findUnfinishedRun(
  warehouse: Warehouse,
  run: { job: string; carrierDay: string; source: string },
): Promise<string | undefined> {
  const reader = await warehouse.readAll(
    `SELECT run_id FROM runs
     WHERE job = $job AND carrier_day = $carrierDay::DATE AND source = $source AND exit_state = $running
     ORDER BY started_at DESC LIMIT 1`,
    { ...run, running: RUN_STATE_RUNNING },
  );
  return reader.getRowObjectsJS()[0]?.run_id as string | undefined;
}

/** How many of the run's lookup_results rows have each outcome and error code. */
export async function lookupOutcomeCounts(
  warehouse: Warehouse,
  runId: string,
): Promise<{ outcome: string; errorCode: string | null; count: number }[]> {
  const reader = await warehouse.readAll(
    'SELECT outcome, error_code, count(*) AS n FROM lookup_results WHERE run_id = $runId GROUP BY ALL ORDER BY ALL',
    { runId },
  );
  return reader.getRowObjectsJS().map((row) => ({
    outcome: row.outcome as string,
    errorCode: row.error_code as string | null,
    count: countOf(row.n),
  }));
}

/** An order whose request failed for good, as a run's summary lists it. */
export interface FailedOrder {
  readonly orderCode: string;
  readonly errorCode: string;
  readonly errorMessage: string;
}

/**
 * The run's orders that failed for good, the first `limit`, and how many there are in all: transport
 * failures after every retry, and carrier answers that settle nothing (EXCEPTION after every retry).
 */
export async function failedLookups(
  warehouse: Warehouse,
  runId: string,
  limit: number,
): Promise<{ readonly listed: FailedOrder[]; readonly total: number }> {
  // The codes come from the carriers' reference data: capitals and underscores only.
  const settling = SETTLING_ERROR_CODES.map((code) => `'${code}'`).join(', ');
  const failed = `run_id = $runId AND (outcome = 'transport_error' OR (outcome = 'carrier_error' AND error_code NOT IN (${settling})))`;
  const [listed, total] = await Promise.all([
    warehouse.readAll(
      `SELECT order_code, error_code, coalesce(error_message, '') AS error_message FROM lookup_results
       WHERE ${failed} ORDER BY finished_at, order_code LIMIT $limit`,
      { runId, limit },
    ),
    warehouse.readAll(`SELECT count(*) AS n FROM lookup_results WHERE ${failed}`, { runId }),
  ]);
  return {
    listed: listed.getRowObjectsJS().map((row) => ({
      orderCode: row.order_code as string,
      errorCode: row.error_code as string,
      errorMessage: row.error_message as string,
    })),
    total: countOf(total.getRowObjectsJS()[0]!.n),
  };
}

/** The codes with a result committed in the run, a deferral aside: looked up for good. */
export async function settledOrderCodes(warehouse: Warehouse, runId: string): Promise<Set<string>> {
  const reader = await warehouse.readAll(
    `SELECT order_code FROM lookup_results WHERE run_id = $runId AND outcome <> 'deferred'`,
    { runId },
  );
  return new Set(reader.getRowObjectsJS().map((row) => row.order_code as string));
}
