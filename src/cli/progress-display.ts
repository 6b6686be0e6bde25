import cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import { groupThousands } from '../carriers/money.js';
import type { OperationProgress } from '../pipeline/customer-operation-run.js';
import type { ProgressListener } from '../pipeline/run-lifecycle.js';
import type { TrackProgress } from '../pipeline/tracking/track-run.js';

function quotaLeft(progress: TrackProgress): string {
  return progress.quota.map((q) => `${q.alias} ${groupThousands(q.remaining)}`).join(', ');
}

/** A progress bar on a terminal: done and total, rate, ETA and the quota left per key. */
function terminalProgress(): ProgressListener<TrackProgress> {
  const bar = new cliProgress.SingleBar(
    {
      format: 'lookups {bar} {value}/{total} | {rate}/s | ETA {eta_formatted} | errors {errors} | quota left: {quota}',
      hideCursor: true,
      etaBuffer: 200,
    },
    cliProgress.Presets.shades_classic,
  );
  const startedAt = Date.now();
  const payload = (p: TrackProgress) => ({
    rate: Math.round(p.done / Math.max(0.001, (Date.now() - startedAt) / 1000)),
    errors: p.counters.carrierErrors + p.counters.transportErrors,
    quota: quotaLeft(p),
  });
  return {
    start: (p) => bar.start(p.total, p.done, payload(p)),
    update: (p) => bar.update(p.done, payload(p)),
    stop: () => bar.stop(),
  };
}

/** Without a terminal: a progress log line every `intervalMs`. */
function loggedProgress(logger: Logger, intervalMs = 10_000): ProgressListener<TrackProgress> {
  let lastLogged = 0;
  const startedAt = Date.now();
  const line = (p: TrackProgress) => ({
    done: p.done,
    total: p.total,
    perSecond: Math.round(p.done / Math.max(0.001, (Date.now() - startedAt) / 1000)),
    ok: p.counters.ok,
    carrierErrors: p.counters.carrierErrors,
    transportErrors: p.counters.transportErrors,
    deferred: p.counters.deferred,
    quotaLeft: Object.fromEntries(p.quota.map((q) => [q.alias, q.remaining])),
  });
  return {
    start: (p) => logger.info(line(p), 'progress'),
    update: (p) => {
      if (Date.now() - lastLogged < intervalMs) return;
      lastLogged = Date.now();
      logger.info(line(p), 'progress');
    },
    stop: () => {},
  };
}

/** A progress bar for a price or images run on a terminal: done and total, rate, ETA, failures. */
function terminalOperationProgress(): ProgressListener<OperationProgress> {
  const bar = new cliProgress.SingleBar(
    {
      format:
        '{operation} {bar} {value}/{total} | {rate}/s | ETA {eta_formatted} | refused {carrierErrors} | failed {failed} | rejected {rejected}',
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const startedAt = Date.now();
  const payload = (p: OperationProgress) => ({
    ...p,
    rate: Math.round(p.done / Math.max(0.001, (Date.now() - startedAt) / 1000)),
  });
  return {
    start: (p) => bar.start(p.total, p.done, payload(p)),
    update: (p) => {
      bar.setTotal(p.total);
      bar.update(p.done, payload(p));
    },
    stop: () => bar.stop(),
  };
}

/** Without a terminal: a progress log line for a price or images run every `intervalMs`. */
function loggedOperationProgress(logger: Logger, intervalMs = 10_000): ProgressListener<OperationProgress> {
  let lastLogged = 0;
  return {
    start: (p) => logger.info(p, 'progress'),
    update: (p) => {
      if (Date.now() - lastLogged < intervalMs) return;
      lastLogged = Date.now();
      logger.info(p, 'progress');
    },
    stop: () => {},
  };
}

/** A tracking run's progress: a bar when wanted and stderr is a terminal, else periodic log lines. */
export function trackProgressDisplay(logger: Logger, bar: boolean): ProgressListener<TrackProgress> {
  return bar && process.stderr.isTTY ? terminalProgress() : loggedProgress(logger);
}

/** A price or images run's progress: a bar when wanted and stderr is a terminal, else periodic log lines. */
export function operationProgressDisplay(logger: Logger, bar: boolean): ProgressListener<OperationProgress> {
  return bar && process.stderr.isTTY ? terminalOperationProgress() : loggedOperationProgress(logger);
}
