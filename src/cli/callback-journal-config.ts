import { dataFolder } from '../warehouse/data-folder.js';

export const CALLBACK_JOURNAL_ENV = 'PARCEL_RECON_CALLBACK_JOURNAL';

/** How long a command waits for a callback receiver that holds the warehouse for one of its short loads. */
export const WAREHOUSE_BUSY_WAIT_MS = 10_000;

/** The callback journal: the flag, else the environment, else `callbacks/` in the data folder (data/callbacks/). */
export function callbackJournalDir(dataDir: string, flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return flag ?? env[CALLBACK_JOURNAL_ENV] ?? dataFolder(dataDir).callbackJournal;
}
