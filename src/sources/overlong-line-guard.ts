import { rejectionText } from './source-rows.js';

const LF = 0x0a;
const CR = 0x0d;
/** Enough bytes for 200 characters of UTF-8. */
const PREVIEW_BYTES = 800;

/**
 * What replaces an over-long line. 0xFF never occurs in UTF-8, so a row holding these bytes is invalid
 * anyway; the CSV source reads bytes as latin1, where the marker is this text.
 */
export const OVERLONG_LINE_MARKER = '\u00ff\u00feparcel-recon: line over the limit\u00fe\u00ff';
const MARKER_BYTES = Buffer.from(OVERLONG_LINE_MARKER, 'latin1');

/**
 * Keeps physical lines over `maxLineBytes` away from csv-parse. csv-parse 7 cannot go on after a record
 * over its max_record_size: with skip_records_with_error it drops every later chunk. So each line over
 * the limit is replaced by a marker line, which csv-parse numbers and quotes like any other line, and
 * the source turns each marker it meets back into a rejection, in order. Memory stays within one line.
 */
export class OverlongLineGuard {
  /** Previews of the lines replaced and not yet claimed, oldest first. */
  private readonly replaced: string[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overlongPreview: Buffer[] | null = null;

  constructor(private readonly maxLineBytes: number) {}

  async *guard(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      const passed = this.pass(chunk);
      if (passed.length > 0) yield passed;
    }
    if (this.overlongPreview !== null) {
      this.endOverlongLine();
      yield MARKER_BYTES;
    } else if (this.pendingBytes > 0) {
      yield Buffer.concat(this.pending);
    }
  }

  /**
   * The preview of the first replaced line in a record's text (read as latin1), or null when it has no
   * marker. Claims one replaced line per marker: a quoted field can span several.
   */
  claim(recordText: string): string | null {
    if (this.replaced.length === 0 || !recordText.includes(OVERLONG_LINE_MARKER)) return null;
    const markers = recordText.split(OVERLONG_LINE_MARKER).length - 1;
    const claimed = this.replaced.splice(0, markers);
    return claimed[0] ?? '';
  }

  /** The bytes of `chunk` that may go on now; the start of an unfinished line waits for the next chunk. */
  private pass(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let pos = 0;
    while (pos < chunk.length) {
      if (this.overlongPreview !== null) {
        const lineEnd = firstLineBreak(chunk, pos);
        this.addToPreview(chunk.subarray(pos, lineEnd < 0 ? chunk.length : lineEnd));
        if (lineEnd < 0) break;
        this.endOverlongLine();
        out.push(MARKER_BYTES);
        pos = lineEnd;
        continue;
      }
      // A line break at or before `lastAllowed` keeps the current line within the limit.
      const lastAllowed = pos + this.maxLineBytes - this.pendingBytes;
      const lineEnd = lastLineBreak(chunk, pos, Math.min(lastAllowed, chunk.length - 1));
      if (lineEnd >= 0) {
        out.push(...this.pending, chunk.subarray(pos, lineEnd + 1));
        this.pending = [];
        this.pendingBytes = 0;
        pos = lineEnd + 1;
      } else if (chunk.length - 1 < lastAllowed) {
        this.pending.push(chunk.subarray(pos));
        this.pendingBytes += chunk.length - pos;
        break;
      } else {
        this.overlongPreview = [];
        this.addToPreview(Buffer.concat([...this.pending, chunk.subarray(pos, lastAllowed + 1)]));
        this.pending = [];
        this.pendingBytes = 0;
        pos = lastAllowed + 1;
      }
    }
    return Buffer.concat(out);
  }

  private addToPreview(bytes: Buffer): void {
    const preview = this.overlongPreview;
    if (preview === null) return;
    const kept = preview.reduce((sum, part) => sum + part.length, 0);
    if (kept < PREVIEW_BYTES) preview.push(Buffer.from(bytes.subarray(0, PREVIEW_BYTES - kept)));
  }

  private endOverlongLine(): void {
    this.replaced.push(rejectionText(Buffer.concat(this.overlongPreview ?? []).toString('utf8')));
    this.overlongPreview = null;
  }
}

function firstLineBreak(chunk: Buffer, from: number): number {
  const lf = chunk.indexOf(LF, from);
  const cr = chunk.indexOf(CR, from);
  if (lf < 0) return cr;
  if (cr < 0) return lf;
  return Math.min(lf, cr);
}

function lastLineBreak(chunk: Buffer, from: number, to: number): number {
  // A view bounds the backward search, which would otherwise run on to the chunk's start.
  const window = chunk.subarray(from, to + 1);
  const last = Math.max(window.lastIndexOf(LF), window.lastIndexOf(CR));
  return last < 0 ? -1 : from + last;
}
