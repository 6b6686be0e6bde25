import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { finished } from 'node:stream/promises';
import { type Stringifier, stringify } from 'csv-stringify';

export interface RejectedInput {
  readonly origin: string;
  readonly orderCode: string | null;
  readonly rejectCode: string;
  readonly reason: string;
}

/** The run's rejects as CSV (origin, order_code, reject_code, reason), written as they come. */
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
    if (!this.stringifier.write([reject.origin, reject.orderCode ?? '', reject.rejectCode, reject.reason])) {
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
