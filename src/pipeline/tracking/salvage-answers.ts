import { settledOrderCodes } from '../../warehouse/run-store.js';
import { type AnswerLookup, NO_ANSWER } from '../../warehouse/snapshot-spool-format.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import {
  type LoggedAnswer,
  plainSpoolFilesOfRun,
  plainSpoolPath,
  readAnswerLog,
  removeSpoolFile,
  spoolFilesOfRun,
  unfinishedSpoolFilesOfRun,
} from '../raw-spool.js';
import type { OrderOutcome } from './order-lookup.js';
import { ResultBatcher } from './result-batcher.js';

export interface SalvageOptions {
  readonly warehouse: Warehouse;
  readonly runId: string;
  /** The run's scratch folder, for the loader's staging files. */
  readonly scratchDir: string;
  readonly dataDir: string;
  readonly now: () => number;
  /** The run's carrier: a resumed run is the cut-off run's carrier's. */
  readonly carrier: string;
}

type OutcomeLookup = Extract<AnswerLookup, { outcome: 'ok' | 'carrier_error' }>;
type LoggedOutcome = LoggedAnswer & { readonly lookup: OutcomeLookup };

const isOutcome = (answer: LoggedAnswer): answer is LoggedOutcome =>
  answer.lookup !== undefined && answer.lookup.outcome !== 'passed';

/**
 * Loads the answers a cut-off process of the run received and never committed as the run's results,
 * through the same batcher and loader as answers that come now, before the work is selected: those
 * orders are not looked up again, and their lookups, counted by the ledger when they were sent, are
 * not counted again. Returns how many answers were loaded.
 *
 * They are in the run's answer log: its unfinished files, and the finished files whose batch the kill
 * kept from its commit. Batches commit in the order their files were written, so those are the newest
 * finished files, back to the first whose lookups are settled. What is loaded is written again to a
 * batch of this process (every answer of the files, the ones that are no result as passed answers),
 * and the files it came from go.
 */
export async function salvageAnswers(options: SalvageOptions): Promise<number> {
  const { warehouse, runId, dataDir } = options;
  const settled = await settledOrderCodes(warehouse, runId);
  const uncommitted: { path: string; answers: LoggedAnswer[] }[] = [];
  for (const file of (await spoolFilesOfRun(dataDir, runId)).reverse()) {
    const answers = await readAnswerLog(file.path);
    const outcomes = answers.filter(isOutcome);
    if (outcomes.length === 0) continue;
    if (outcomes.some((answer) => settled.has(answer.lookup.askedCode))) break;
    uncommitted.unshift({ path: file.path, answers });
  }
  for (const path of await unfinishedSpoolFilesOfRun(dataDir, runId))
    uncommitted.push({ path, answers: await readAnswerLog(path) });
  const batcher = new ResultBatcher(warehouse, runId, options.scratchDir, dataDir, options.now, options.carrier);
  // Committed batches whose files the kill left plain are kept compressed now, as they would have been.
  const loadedAgain = new Set(uncommitted.map(({ path }) => plainSpoolPath(path)));
  for (const path of await plainSpoolFilesOfRun(dataDir, runId))
    if (!loadedAgain.has(path)) batcher.keepCompressed(path);
  if (uncommitted.length === 0) {
    await batcher.finish();
    return 0;
  }

  // The last answer of each code looked up is its result; every other answer is kept as passed.
  const results = new Map<string, LoggedOutcome>();
  for (const { answers } of uncommitted)
    for (const answer of answers)
      if (isOutcome(answer) && !settled.has(answer.lookup.askedCode)) results.set(answer.lookup.askedCode, answer);
  for (const { answers } of uncommitted)
    for (const answer of answers) {
      if (isOutcome(answer) && results.get(answer.lookup.askedCode) === answer) {
        const { askedCode, origin } = answer.lookup;
        batcher.add(askedCode, answer.accountAlias, origin, outcomeOf(answer), true, answer.seenAt);
      } else if (answer.body !== NO_ANSWER)
        batcher.addPassedAnswer(answer.orderCode, answer.accountAlias, Buffer.from(answer.body), answer.seenAt);
    }
  await batcher.finish();
  // Loaded, and written again with the batch that loaded them: the cut-off process's files go.
  await Promise.all(uncommitted.map(({ path }) => removeSpoolFile(path)));
  return results.size;
}

function outcomeOf(answer: LoggedOutcome): OrderOutcome {
  const { lookup } = answer;
  const body = Buffer.from(answer.body, 'utf8');
  if (lookup.outcome === 'ok') return { kind: 'ok', orderCode: answer.orderCode, body, attempts: lookup.attempts };
  return {
    kind: 'carrier_error',
    errorCode: lookup.errorCode ?? '',
    errorMessage: lookup.errorMessage,
    body: answer.body === NO_ANSWER ? Buffer.alloc(0) : body,
    attempts: lookup.attempts,
  };
}
