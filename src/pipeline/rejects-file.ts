import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import { type Stringifier, stringify } from 'csv-stringify';
import { diskFaultOf } from '../errors/disk-fault.js';
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
  /** The first write the disk refused: the file is removed and the run ends with it. */
  private failure: Error | undefined;
  /** Settles at that failure: a write waiting for room stops waiting (the file takes no more). */
  private failed: Promise<void> = new Promise(() => undefined);
  count = 0;

  constructor(readonly path: string) {}

  async add(reject: RejectedInput): Promise<void> {
    if (!this.stringifier) {
      await mkdir(dirname(this.path), { recursive: true });
      this.output = createWriteStream(this.path);
      const output = this.output;
      this.failed = new Promise((resolve) =>
        output.on('error', (error) => {
          this.failure ??= error;
          resolve();
        }),
      );
      this.stringifier = stringify({
        header: true,
        columns: ['origin', 'order_code', 'reject_code', 'reason'],
        bom: true,
      });
      this.stringifier.pipe(this.output);
    }
    await this.refuseAfterFailure();
    this.count++;
    const row = [reject.origin, reject.orderCode ?? '', reject.rejectCode, reject.reason].map(formulaSafeText);
    if (!this.stringifier.write(row)) {
      await Promise.race([new Promise((resolve) => this.stringifier!.once('drain', resolve)), this.failed]);
      await this.refuseAfterFailure();
    }
  }

  /** Finishes the file; no file is written when nothing was rejected. */
  async close(): Promise<void> {
    if (!this.stringifier || !this.output) return;
    this.stringifier.end();
    await finished(this.output).catch(() => undefined);
    await this.refuseAfterFailure();
  }

  /** After a failed write: no half file is left, and the failure, a disk fault naming the file, ends the run. */
  private async refuseAfterFailure(): Promise<void> {
    if (this.failure === undefined) return;
    this.output?.destroy();
    await rm(this.path, { force: true });
    throw diskFaultOf(this.failure, this.path) ?? this.failure;
  }
}
