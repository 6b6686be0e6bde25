import { createReadStream } from 'node:fs';

/** A CSV file whose every line is one record: what DuckDB's reader splits exactly as csv-parse does. */
export interface PlainCsvShape {
  /** Its physical lines, the last one counted whether or not a newline ends it. */
  readonly lines: number;
  /** Its field delimiter: the one of `,` and `;` it has (`,` when it has neither). */
  readonly delimiter: ',' | ';';
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;

/**
 * Counts a file's bytes without parsing it: its shape when it has no quote, at most one of the two
 * delimiters, no empty line and one line ending throughout (`\n` or `\r\n`); undefined otherwise (a quote may join lines
 * into one record or be read differently, an empty line is skipped, a lone `\r` may end a record).
 */
export async function plainCsvShape(file: string): Promise<PlainCsvShape | undefined> {
  let lf = 0;
  let cr = 0;
  let crlf = 0;
  let comma = false;
  let semicolon = false;
  let emptyLine = false;
  let size = 0;
  // The byte before the current one and the one before it, across chunks; a file starts as after a line.
  let previous = LF;
  let beforePrevious = LF;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (chunk.includes(QUOTE)) return undefined;
    comma ||= chunk.includes(COMMA);
    semicolon ||= chunk.includes(SEMICOLON);
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === LF) {
        lf++;
        if (previous === CR) {
          crlf++;
          if (beforePrevious === LF) emptyLine = true;
        } else if (previous === LF) emptyLine = true;
      } else if (byte === CR) cr++;
      beforePrevious = previous;
      previous = byte;
    }
  }
  if (size === 0 || emptyLine || (comma && semicolon)) return undefined;
  if (cr !== 0 && (cr !== crlf || crlf !== lf)) return undefined;
  return { lines: previous === LF ? lf : lf + 1, delimiter: semicolon ? ';' : ',' };
}
