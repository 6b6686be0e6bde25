import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Workers a pool starts at most: csv-stringify is CPU work, one per core. */
const MAX_WORKERS = Math.max(1, Math.min(availableParallelism(), 4));

/**
 * csv-stringify makes a few short-lived objects per value: with V8's default young generation a
 * worker spends much of its time collecting them, so each worker gets a larger one.
 */
const YOUNG_GENERATION_MB = 256;

type Pending = { resolve: (csv: string) => void; reject: (error: Error) => void };

/**
 * csv-stringify run in worker threads, a batch of rows per message; the workers start at the first
 * batch and stop with `close`. Each batch's answer is its CSV lines, as `stringify(rows)` gives them.
 */
export class CsvStringifyPool {
  readonly #workers: Worker[] = [];
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #failure: Error | undefined;

  /** Batches a writer should keep in flight to keep every worker busy. */
  get depth(): number {
    return MAX_WORKERS * 2;
  }

  /** The CSV lines of `rows`, the JSON text of an array of row arrays (strings or null). */
  stringify(rows: string): Promise<string> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#workers.length === 0) this.#start();
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#workers[id % this.#workers.length]!.postMessage({ id, rows });
    });
  }

  #start(): void {
    for (let i = 0; i < MAX_WORKERS; i++) {
      const worker = new Worker(new URL('./csv-stringify-worker.js', import.meta.url), {
        resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
      });
      worker.on('message', ({ id, csv, error }: { id: number; csv?: string; error?: string }) => {
        const pending = this.#pending.get(id);
        this.#pending.delete(id);
        if (error !== undefined) pending?.reject(new Error(`csv-stringify: ${error}`));
        else pending?.resolve(csv!);
      });
      worker.on('error', (error) => this.#fail(error));
      this.#workers.push(worker);
    }
  }

  #fail(error: Error): void {
    this.#failure = error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.splice(0).map((worker) => worker.terminate()));
  }
}
