import { parentPort } from 'node:worker_threads';
import { csvLines } from './csv-lines.js';

/**
 * A worker of the CSV stringify pool: takes a batch of rows as the JSON text of an array of row
 * arrays (what DuckDB's to_json gave, joined), answers its CSV lines from csv-stringify.
 */
parentPort!.on('message', ({ id, rows }: { id: number; rows: string }) => {
  try {
    parentPort!.postMessage({ id, csv: csvLines(JSON.parse(rows) as (string | null)[][]) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
