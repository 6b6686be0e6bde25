import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import { type Stringifier, stringify } from 'csv-stringify';
import { formulaSafeText } from '../warehouse/formula-safe-text.js';

export interface RejectedInput {
  readonly origin: string;
  readonly orderCode: string | null;
  readonly rejectCode: string;
  readonly reason: string;
}

/**
 * The run's rejects as CSV (origin, order_code, reject_code, reason), written as they come; a value
 * that would start a formula in a spreadsheet is written after a `'`.
 */
export class RejectsFile {
  private stringifier: Stringifier | undefined;
  private output: WriteStream | undefined;
  count = 0;

  constructor(readonly path: string) {}

  async add(reject: RejectedInput): Promise<void> {
    if (!this.stringifier) {
      await mkdir(dirname(this.path), { recursive: true });
      this.output = createWriteStream(this.path);
      this.stringifier = stringify({
        header: true,
        columns: ['origin', 'order_code', 'reject_code', 'reason'],
        bom: true,
      });
      this.stringifier.pipe(this.output);
    }
    this.count++;
    const row = [reject.origin, reject.orderCode ?? '', reject.rejectCode, reject.reason].map(formulaSafeText);
    if (!this.stringifier.write(row)) {
      await new Promise((resolve) => this.stringifier!.once('drain', resolve));
    }
  }

  /** Finishes the file; no file is written when nothing was rejected. */
  async close(): Promise<void> {
    if (!this.stringifier || !this.output) return;
    this.stringifier.end();
    await finished(this.output);
  }
}
