import { isAscii } from 'node:buffer';
import { createReadStream } from 'node:fs';

/** A CSV file whose every line is one record: what DuckDB's reader splits exactly as csv-parse does. */
export interface PlainCsvShape {
  /** Its physical lines, the last one counted whether or not a newline ends it. */
  readonly lines: number;
  /** Its field delimiter: the one of `,` and `;` it has (`,` when it has neither). */
  readonly delimiter: ',' | ';';
  /**
   * What `String.prototype.trim` may take off its values: nothing (ASCII without white space), spaces
   * (ASCII whose only white space is the space), or any white space.
   */
  readonly blanks: 'none' | 'spaces' | 'any';
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;
const SPACE = 0x20;
/** The ASCII white space other than the space and line endings: tab, vertical tab, form feed. */
const OTHER_BLANKS = [0x09, 0x0b, 0x0c];
const BOM = Buffer.from('\uFEFF');

/** How many times `value` occurs in `buffer` (Buffer's own search, far faster than a loop over the bytes). */
function occurrences(buffer: Buffer, value: number | string): number {
  let count = 0;
  for (let at = buffer.indexOf(value); at !== -1; at = buffer.indexOf(value, at + 1)) count++;
  return count;
}

/**
 * Counts a file's bytes without parsing it: its shape when it has no quote, at most one of the two
 * delimiters, no empty line and one line ending throughout (`\n` or `\r\n`); undefined otherwise (a
 * quote may join lines into one record or be read differently, an empty line is skipped, a lone `\r`
 * may end a record).
 */
export async function plainCsvShape(file: string): Promise<PlainCsvShape | undefined> {
  let lf = 0;
  let cr = 0;
  let crlf = 0;
  let comma = false;
  let semicolon = false;
  let spaces = false;
  let otherBlanks = false;
  let size = 0;
  // The two bytes before a chunk, so that a line ending or an empty line across chunks is seen; a file starts as after a line.
  let before = Buffer.from(' \n');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    if (chunk.includes(QUOTE)) return undefined;
    // DuckDB and csv-parse both drop the byte order mark that starts a file.
    const text = size === 0 && chunk.subarray(0, BOM.length).equals(BOM) ? chunk.subarray(BOM.length) : chunk;
    spaces ||= text.includes(SPACE);
    otherBlanks ||= !isAscii(text) || OTHER_BLANKS.some((byte) => text.includes(byte));
    size += chunk.length;
    comma ||= chunk.includes(COMMA);
    semicolon ||= chunk.includes(SEMICOLON);
    lf += occurrences(chunk, LF);
    const joined = Buffer.concat([before, chunk]);
    if (joined.includes('\n\n') || joined.includes('\n\r\n')) return undefined;
    const withLastByte = joined.subarray(1);
    if (withLastByte.includes(CR)) {
      cr += occurrences(chunk, CR);
      crlf += occurrences(withLastByte, '\r\n');
    }
    before = joined.subarray(joined.length - 2);
  }
  if (size === 0 || (comma && semicolon)) return undefined;
  if (cr !== 0 && (cr !== crlf || crlf !== lf)) return undefined;
  return {
    lines: before[1] === LF ? lf : lf + 1,
    delimiter: semicolon ? ';' : ',',
    blanks: otherBlanks ? 'any' : spaces ? 'spaces' : 'none',
  };
}
