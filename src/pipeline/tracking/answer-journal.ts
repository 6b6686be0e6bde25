import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync, writevSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { CarrierInstant } from '../../carrier/contract.js';
import { diskFaultOf } from '../../errors/disk-fault.js';
import { ANSWER_KEY, ANSWER_SPOOL_LINE_END, answerTextOfSpoolLine } from '../../warehouse/snapshot-spool-format.js';

/** What a journal line keeps of an answered lookup besides the answer: enough to give it its result row again. */
export interface JournaledLookup {
  /** The code looked up. */
  readonly askedCode: string;
  readonly accountAlias: string;
  readonly origin: string;
  readonly attempts: number;
  readonly seenAt: CarrierInstant;
  readonly kind: 'ok' | 'carrier_error';
  /** The order code a snapshot names (the code looked up for a carrier error). */
  readonly orderCode: string;
  readonly errorCode: string | null;
  readonly errorMessage: string | null;
}

/** A journal line read back: the lookup, and the answer's text as it came. */
export interface JournaledAnswer extends JournaledLookup {
  readonly body: string;
}

const JOURNAL_FILE = /^answers-.+\.ndjson$/;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const LINE_END = Buffer.from(`${ANSWER_SPOOL_LINE_END}\n`);

/** Line breaks in JSON text are whitespace between tokens (inside strings they are escaped): spaces keep the line whole. */
function withoutLineBreaks(body: Buffer): Buffer {
  if (!body.includes(LINE_FEED) && !body.includes(CARRIAGE_RETURN)) return body;
  const copy = Buffer.from(body);
  for (let i = 0; i < copy.length; i++) if (copy[i] === LINE_FEED || copy[i] === CARRIAGE_RETURN) copy[i] = SPACE;
  return copy;
}

/**
 * A batch's answers in the run's scratch folder while the batch gathers, each line written on its own
 * as its answer comes (one synchronous write, nothing held back in the process), so a process killed
 * at any moment leaves every answer it received on disk and the resumed run loads them instead of
 * looking the orders up again. A line is the lookup's fields, then the answer as it came, in the
 * spool line's form (answerTextOfSpoolLine reads it back). Removed once the batch has committed.
 */
export class AnswerJournal {
  private fd: number | undefined;
  private path: string | undefined;

  constructor(private readonly scratchDir: string) {}

  /**
   * Writes the answer's line. A disk that refuses it is a disk fault naming the file (Node's error on
   * a write names none), and the file is removed: its batch is not committed, and is looked up again.
   */
  write(lookup: JournaledLookup, body: Buffer): void {
    try {
      if (this.fd === undefined) {
        mkdirSync(this.scratchDir, { recursive: true });
        this.path = join(this.scratchDir, `answers-${process.pid}-${randomUUID()}.ndjson`);
        this.fd = openSync(this.path, 'wx');
      }
      const start = Buffer.from(JSON.stringify(lookup).slice(0, -1) + ANSWER_KEY, 'utf8');
      writevSync(this.fd, [start, withoutLineBreaks(body), LINE_END]);
    } catch (error) {
      const fault = diskFaultOf(error, this.path ?? this.scratchDir);
      if (fault === undefined) throw error;
      // A full disk fails the warehouse's next commit too: the room this file took is given back at once.
      this.close();
      if (this.path !== undefined) rmSync(this.path, { force: true });
      throw fault;
    }
  }

  /** Closes and removes the file: its batch has committed. */
  async remove(): Promise<void> {
    this.close();
    if (this.path !== undefined) await rm(this.path, { force: true });
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The journal files a cut-off process left in the run's scratch folder. */
export async function journalFiles(scratchDir: string): Promise<string[]> {
  const names = await readdir(scratchDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return names.filter((name) => JOURNAL_FILE.test(name)).map((name) => join(scratchDir, name));
}

/**
 * The whole lines of journal files, the last answer of each code looked up: a line without its line
 * feed, cut off by the kill, is left out (its order is looked up again).
 */
export async function readJournals(paths: readonly string[]): Promise<JournaledAnswer[]> {
  const answers = new Map<string, JournaledAnswer>();
  for (const path of paths) {
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines.pop();
    for (const line of lines) {
      const answer = parseJournalLine(line);
      if (answer !== undefined) answers.set(answer.askedCode, answer);
    }
  }
  return [...answers.values()];
}

function parseJournalLine(line: string): JournaledAnswer | undefined {
  try {
    const { answer: _answer, ...lookup } = JSON.parse(line) as JournaledLookup & { answer: unknown };
    return { ...lookup, body: answerTextOfSpoolLine(line) };
  } catch {
    return undefined;
  }
}
