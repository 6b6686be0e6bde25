import { rm } from 'node:fs/promises';
import { settledOrderCodes } from '../../warehouse/run-store.js';
import type { Warehouse } from '../../warehouse/warehouse.js';
import { type JournaledAnswer, journalFiles, readJournals } from './answer-journal.js';
import type { OrderOutcome } from './order-lookup.js';
import { ResultBatcher } from './result-batcher.js';

export interface SalvageOptions {
  readonly warehouse: Warehouse;
  readonly runId: string;
  /** The run's scratch folder, where a cut-off process left its journals. */
  readonly scratchDir: string;
  readonly dataDir: string;
  readonly now: () => number;
}

/**
 * Loads the answers a cut-off process of the run received and never committed (its AnswerJournals)
 * as the run's results, through the same batcher and loader as answers that come now, before the work
 * is selected: those orders are not looked up again, and their lookups, counted by the ledger when
 * they were sent, are not counted again. Returns how many answers were loaded.
 */
export async function salvageAnswers(options: SalvageOptions): Promise<number> {
  const { warehouse, runId, scratchDir } = options;
  const files = await journalFiles(scratchDir);
  if (files.length === 0) return 0;
  const settled = await settledOrderCodes(warehouse, runId);
  const answers = (await readJournals(files)).filter((answer) => !settled.has(answer.askedCode));
  if (answers.length > 0) {
    const batcher = new ResultBatcher(warehouse, runId, scratchDir, options.dataDir, options.now);
    for (const answer of answers)
      batcher.add(answer.askedCode, answer.accountAlias, answer.origin, outcomeOf(answer), true, answer.seenAt);
    await batcher.flush();
  }
  // Loaded (their batch journaled them again until it committed): the cut-off process's files go.
  await Promise.all(files.map((file) => rm(file, { force: true })));
  return answers.length;
}

function outcomeOf(answer: JournaledAnswer): OrderOutcome {
  const body = Buffer.from(answer.body, 'utf8');
  if (answer.kind === 'ok') return { kind: 'ok', orderCode: answer.orderCode, body, attempts: answer.attempts };
  return {
    kind: 'carrier_error',
    errorCode: answer.errorCode ?? '',
    errorMessage: answer.errorMessage,
    body: answer.body === 'null' ? Buffer.alloc(0) : body,
    attempts: answer.attempts,
  };
}
