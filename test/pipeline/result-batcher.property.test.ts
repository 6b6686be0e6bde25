import { join } from 'node:path';
import { fc } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CARRIER_ID } from '../../src/carriers/known-carriers.js';
import { readRawSpoolFile, spoolFilesOfRun } from '../../src/pipeline/raw-spool.js';
import type { DeferReason, OrderOutcome } from '../../src/pipeline/tracking/order-lookup.js';
import { ResultBatcher } from '../../src/pipeline/tracking/result-batcher.js';
import { rowsOf, snapshotOf, trackingWire, useTempDirs } from '../warehouse/warehouse-fixtures.js';

const temp = useTempDirs();
const FIRST_RUN_MS = Date.parse('2026-11-11T01:00:00Z');
const HOUR_MS = 3_600_000;
/** Codes a schedule's runs draw from, so later runs look up orders earlier ones stored. */
const POOL = 8;
/** Status and tracking rows of the fixture's answer: an order loaded twice would hold twice as many. */
const HISTORY_ROWS = 3;

type Answer =
  | { readonly kind: 'ok'; readonly namesAnother: boolean }
  | { readonly kind: 'carrier_error'; readonly withBody: boolean }
  | { readonly kind: 'transport_error' }
  | { readonly kind: 'deferred'; readonly reason: DeferReason };

interface Run {
  readonly batchSize: number;
  readonly lookups: readonly { readonly code: number; readonly answer: Answer }[];
}

const answers: fc.Arbitrary<Answer> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('ok'), namesAnother: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('carrier_error'), withBody: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('transport_error') }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deferred'),
      reason: fc.constantFrom<DeferReason>('quota', 'key_limit', 'max_lookups', 'key_not_found', 'stopping'),
    }),
  },
) as fc.Arbitrary<Answer>;

const runs: fc.Arbitrary<Run[]> = fc.array(
  fc.record({
    batchSize: fc.integer({ min: 1, max: 5 }),
    // A run asks for each code once.
    lookups: fc.uniqueArray(fc.record({ code: fc.integer({ min: 0, max: POOL - 1 }), answer: answers }), {
      selector: (lookup) => lookup.code,
      maxLength: POOL,
    }),
  }),
  { minLength: 2, maxLength: 3 },
);

describe('ResultBatcher, over random answers and batch sizes', () => {
  it('loads every outcome once, each answer to its order and to the raw spool, over runs that look up stored orders again', async () => {
    const { warehouse, dir } = await temp.open();
    let schedule = 0;
    await fc.assert(
      fc.asyncProperty(runs, async (scheduleRuns) => {
        schedule++;
        const codeOf = (n: number) => `PB${schedule}X${n}`;
        /** Orders the warehouse holds: code → the run that last answered with it, and the status it said. */
        const stored = new Map<string, { runId: string; status: string }>();

        for (const [index, run] of scheduleRuns.entries()) {
          const runId = `run-${schedule}-${index}`;
          const status = index % 2 === 0 ? '25' : '30';
          const batcher = new ResultBatcher(
            warehouse,
            runId,
            join(dir, 'spool', runId),
            dir,
            () => FIRST_RUN_MS + (schedule * 10 + index) * HOUR_MS,
            DEFAULT_CARRIER_ID,
          );
          const storedAtStart = new Set(stored.keys());
          const asked = new Set(run.lookups.map((lookup) => codeOf(lookup.code)));
          const expectedResults: [string, string, string | null][] = [];
          const expectedSpool: string[] = [];
          const answered = new Set<string>();

          for (const [line, lookup] of run.lookups.entries()) {
            const code = codeOf(lookup.code);
            let outcome: OrderOutcome;
            const { answer } = lookup;
            if (answer.kind === 'ok') {
              // The carrier may answer with another order than the one asked: one no lookup of this run
              // names, stored before if there is one (the case the batcher must not load as new).
              const others = Array.from({ length: POOL }, (_, n) => codeOf(n)).filter(
                (candidate) => !asked.has(candidate) && !answered.has(candidate),
              );
              const other = others.find((candidate) => storedAtStart.has(candidate)) ?? others[0];
              const named = answer.namesAnother && other !== undefined ? other : code;
              answered.add(named);
              const wire = trackingWire(named);
              wire.status = status;
              outcome = { kind: 'ok', orderCode: named, body: Buffer.from(snapshotOf(wire).body), attempts: 1 };
              expectedResults.push([code, 'ok', null]);
              expectedSpool.push(named);
              stored.set(named, { runId, status });
            } else if (answer.kind === 'carrier_error') {
              const body = answer.withBody
                ? JSON.stringify({ errorCode: 'ORDER_NOT_FOUND', errorMessage: 'no such order' })
                : '';
              outcome = {
                kind: 'carrier_error',
                errorCode: 'ORDER_NOT_FOUND',
                errorMessage: 'no such order',
                body: Buffer.from(body),
                attempts: 1,
              };
              expectedResults.push([code, 'carrier_error', 'ORDER_NOT_FOUND']);
              if (answer.withBody) expectedSpool.push(code);
            } else if (answer.kind === 'transport_error') {
              outcome = {
                kind: 'transport_error',
                errorCode: 'ECONNRESET',
                errorMessage: 'socket hang up',
                attempts: 3,
              };
              expectedResults.push([code, 'transport_error', 'ECONNRESET']);
            } else {
              outcome = { kind: 'deferred', reason: answer.reason, attempts: 0 };
              expectedResults.push([code, 'deferred', answer.reason.toUpperCase()]);
            }
            // As the tracking run feeds it: commit once a batch has gathered, going on while it commits.
            batcher.add(code, 'shop-a', `orders.csv:${line + 2}`, outcome, storedAtStart.has(code));
            if (batcher.shouldFlush(run.batchSize)) await batcher.commitGathering();
          }
          await batcher.flush();

          const results = await rowsOf(
            warehouse,
            `SELECT order_code, outcome, error_code FROM lookup_results WHERE run_id = '${runId}' ORDER BY order_code`,
          );
          expect(results.map((row) => [row.order_code, row.outcome, row.error_code])).toEqual(
            expectedResults.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
          );
          const spooled: string[] = [];
          for (const file of await spoolFilesOfRun(dir, runId))
            for (const response of await readRawSpoolFile(file.path)) spooled.push(response.orderCode);
          expect(spooled.sort()).toEqual(expectedSpool.sort());
        }

        const orders = await rowsOf(
          warehouse,
          `SELECT o.order_code, o.last_run_id, o.status,
                  (SELECT count(*) FROM order_statuses AS s WHERE s.order_code = o.order_code) AS statuses,
                  (SELECT count(*) FROM order_trackings AS t WHERE t.order_code = o.order_code) AS trackings
           FROM orders AS o WHERE o.order_code LIKE 'PB${schedule}X%' ORDER BY o.order_code`,
        );
        // Each order once, as its latest answer said, its history replaced rather than added to.
        expect(orders).toEqual(
          [...stored.entries()]
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([code, { runId, status }]) => ({
              order_code: code,
              last_run_id: runId,
              status,
              statuses: String(HISTORY_ROWS),
              trackings: String(HISTORY_ROWS),
            })),
        );
      }),
      { numRuns: 20 },
    );
  });
});
