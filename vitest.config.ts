import { defineConfig } from 'vitest/config';

/**
 * Test files that need more than Node.js and DuckDB: they run the CLI built in dist/ (the command a
 * user runs, `npm run build` first) or start PostgreSQL, MariaDB, Redis or Chromium. `npm test` runs them with
 * the rest; `npm run test:fast` (the `fast` project) leaves them out, so an edit can be checked in
 * seconds on a machine with none of these. test/test-sets.test.ts checks that no other file needs them.
 */
export const END_TO_END_TESTS = [
  // The built CLI: commands, jobs and reports run as a user runs them.
  'test/callbacks/callback-load.test.ts',
  'test/callbacks/callback-merge.test.ts',
  'test/callbacks/callback-receiver.test.ts',
  'test/callbacks/ghn-webhooks.test.ts',
  'test/callbacks/journal-disk-full.test.ts',
  'test/callbacks/journal-sharing.test.ts',
  'test/cli/carrier-operations.test.ts',
  'test/cli/carrier-upgrade.test.ts',
  'test/cli/cod-report.test.ts',
  'test/cli/command-launcher.test.ts',
  'test/cli/demo.test.ts',
  'test/cli/disk-faults.test.ts',
  'test/cli/finding-marks.test.ts',
  'test/cli/ghn-tracking.test.ts',
  'test/cli/ghn-webhooks.test.ts',
  'test/cli/payouts-import.test.ts',
  'test/cli/read-only-warehouse.test.ts',
  'test/cli/sandbox-payouts.test.ts',
  'test/cli/schema-upgrade.test.ts',
  'test/cli/tracking-memory.test.ts',
  'test/cli/upgrade-steps.test.ts',
  'test/cli/user-mistakes.test.ts',
  'test/jobs/config-file.test.ts',
  'test/jobs/finance-audit-job.test.ts',
  'test/jobs/job-notification.test.ts',
  'test/jobs/job-scheduler.test.ts',
  'test/jobs/nightly-carriers.test.ts',
  'test/jobs/nightly-job.test.ts',
  'test/pipeline/crash-resume.test.ts',
  'test/pipeline/history-nights.test.ts',
  'test/pipeline/hostile-carrier.test.ts',
  'test/pipeline/images-command.test.ts',
  'test/pipeline/price-command.test.ts',
  'test/pipeline/replay-rebuild.test.ts',
  'test/pipeline/run-retention.test.ts',
  'test/pipeline/salvage-resume.test.ts',
  'test/pipeline/second-sigint.test.ts',
  'test/pipeline/track-command.test.ts',
  'test/pipeline/track-plan.test.ts',
  'test/reports/charges-report.test.ts',
  'test/reports/csv-batches.test.ts',
  'test/reports/failures-report.test.ts',
  'test/reports/formula-safe-csv.test.ts',
  'test/reports/money-display.test.ts',
  'test/reports/reconcile-report.test.ts',
  'test/reports/xlsx-report.test.ts',
  'test/sandbox/sandbox-cli.test.ts',
  'test/settings/config-show.test.ts',
  'test/warehouse/parquet-snapshot.test.ts',
  'test/warehouse/snapshot-month-reads.test.ts',
  'test/warehouse/charge-audit-rows.test.ts',
  // PostgreSQL (and MariaDB).
  'test/sources/postgres-source.test.ts',
  'test/sources/price-request-sources.test.ts',
  // MariaDB (and the built CLI).
  'test/pipeline/track-from-mysql.test.ts',
  'test/reports/reconcile-from-mysql.test.ts',
  'test/sources/mysql-source.test.ts',
  // Redis (and the built CLI).
  'test/jobs/sharded-nightly.test.ts',
  'test/pipeline/carrier-outage.test.ts',
  'test/pipeline/sharded-workers.test.ts',
  'test/quota/redis-quota-store.test.ts',
  // Chromium (and the built CLI).
  'test/reports/html-report.test.ts',
];

const ALL_TESTS = 'test/**/*.test.ts';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Tests start real servers (sandbox, PostgreSQL, Redis); two cores do not take more at once.
    maxWorkers: 2,
    // The new warehouse that test/support/fresh-warehouse.ts copies for each test that needs one.
    globalSetup: ['test/support/fresh-warehouse-setup.ts'],
    projects: [
      // The files of both sets share a worker's loaded modules (DuckDB's among them) instead of loading
      // them again for each file; none of them replaces a module or a global.
      { extends: true, test: { name: 'fast', include: [ALL_TESTS], exclude: END_TO_END_TESTS, isolate: false } },
      { extends: true, test: { name: 'end-to-end', include: END_TO_END_TESTS, isolate: false } },
    ],
  },
});
