import { existsSync } from 'node:fs';
import { ingestCallbackJournalAsGuest } from '../src/callbacks/journal-ingest.js';
import { EXIT } from '../src/errors/exit-codes.js';
import { dataFolder } from '../src/warehouse/data-folder.js';
import type { JobContext, JobStepResult } from './job-definition.js';

/**
 * Loads the status callbacks the receiver journaled since the last load, when there is a journal:
 * a terminal callback then spares the tracking step a lookup.
 */
export async function callbacksStep(context: JobContext): Promise<JobStepResult | undefined> {
  const journalDir = context.settings.callbacksJournalDir;
  if (!existsSync(journalDir)) return undefined;
  const result = await ingestCallbackJournalAsGuest(context.warehouse, journalDir, {
    spoolDir: dataFolder(context.settings.dataDir).callbackSpool,
    logger: context.logger,
  });
  return {
    step: 'callbacks',
    exitState: 'ok',
    exitCode: EXIT.OK,
    summary: { journalDir, newEvents: result.newEvents, lines: result.lines, unreadableLines: result.unreadableLines },
  };
}
