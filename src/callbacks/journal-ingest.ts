import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_CARRIER_ID } from '../carriers/known-carriers.js';
import { loadCallbackJournalSlice, readCallbackJournalProgress } from '../warehouse/callback-event-loader.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { listJournalSegments, readJournalLines, segmentWriterEnded } from './callback-journal.js';

/** Bytes of journal read into one warehouse transaction. */
const SLICE_BYTES = 16 * 1024 * 1024;

export interface JournalIngestOptions {
  /** Where the NDJSON handed to DuckDB goes. */
  readonly spoolDir: string;
  readonly logger: Logger;
  /**
   * Whether a segment no writer appends to any more may be deleted once it is wholly in the
   * warehouse. Only the journal's owner (the receiver, or an ingest while no receiver runs) knows.
   */
  readonly isSealed: (segment: string) => boolean;
}

export interface JournalIngestResult {
  /** Events new to callback_events. */
  readonly newEvents: number;
  /** Journal lines read (duplicates included). */
  readonly lines: number;
  /** Lines that were not JSON (left out, logged). */
  readonly unreadableLines: number;
  /** Sealed segments that ended in part of a line (its writer killed mid-write; never acknowledged), skipped. */
  readonly tornTails: number;
  readonly segmentsRemoved: number;
  /** How far each remaining segment is now loaded, in bytes. */
  readonly offsets: ReadonlyMap<string, number>;
}

/**
 * Loads what the journal holds beyond what the warehouse has from it, segment by segment, each slice
 * in one transaction with its new offset: safe to run again, after a crash or from another process
 * (the offsets live in the warehouse). Sealed segments wholly loaded are deleted; a sealed segment's
 * unfinished last line (a receiver killed mid-write, never acknowledged) is dropped with it.
 */
export async function ingestCallbackJournal(
  warehouse: Warehouse,
  journalDir: string,
  options: JournalIngestOptions,
): Promise<JournalIngestResult> {
  const progress = await readCallbackJournalProgress(warehouse);
  let newEvents = 0;
  let lines = 0;
  let unreadableLines = 0;
  let tornTails = 0;
  let segmentsRemoved = 0;
  const offsets = new Map<string, number>();
  for (const segment of await listJournalSegments(journalDir)) {
    const path = join(journalDir, segment);
    // Asked before reading: a segment sealed now gets no more lines, so once read to its end it may go.
    const sealed = options.isSealed(segment);
    let offset = progress.get(segment) ?? 0;
    let trailingBytes = 0;
    for (;;) {
      const slice = await readJournalLines(path, offset, SLICE_BYTES);
      trailingBytes = slice.trailingBytes;
      if (slice.lines.length === 0) break;
      const readable = slice.lines.filter((line) => {
        try {
          JSON.parse(line);
          return true;
        } catch {
          return false;
        }
      });
      if (readable.length < slice.lines.length) {
        options.logger.warn(
          { segment, offset, lines: slice.lines.length - readable.length },
          'unreadable callback journal lines left out',
        );
      }
      newEvents += await loadCallbackJournalSlice(
        warehouse,
        { segment, endOffset: slice.endOffset, lines: readable, lineCount: slice.lines.length },
        options.spoolDir,
        // Records of the previous release name no carrier: it knew 247Express's callbacks only.
        DEFAULT_CARRIER_ID,
      );
      lines += slice.lines.length;
      unreadableLines += slice.lines.length - readable.length;
      offset = slice.endOffset;
    }
    if (sealed) {
      if (trailingBytes > 0) {
        tornTails++;
        options.logger.warn(
          { segment, bytes: trailingBytes },
          'unfinished last line of a sealed callback journal segment dropped (never acknowledged)',
        );
      }
      await rm(path, { force: true });
      segmentsRemoved++;
    } else {
      offsets.set(segment, offset);
    }
  }
  return { newEvents, lines, unreadableLines, tornTails, segmentsRemoved, offsets };
}

/** Journal bytes not yet in the warehouse, by the offsets it holds. */
export async function journalBacklogBytes(journalDir: string, progress: ReadonlyMap<string, number>): Promise<number> {
  let backlog = 0;
  for (const segment of await listJournalSegments(journalDir)) {
    const size = (await stat(join(journalDir, segment)).catch(() => ({ size: 0 }))).size;
    backlog += Math.max(0, size - (progress.get(segment) ?? 0));
  }
  return backlog;
}

/**
 * Loads the journal from a process that does not write it (the nightly run, `callbacks ingest`): a
 * segment is deleted once loaded only when the process that wrote it has ended.
 */
export function ingestCallbackJournalAsGuest(
  warehouse: Warehouse,
  journalDir: string,
  options: Omit<JournalIngestOptions, 'isSealed'>,
): Promise<JournalIngestResult> {
  return ingestCallbackJournal(warehouse, journalDir, { ...options, isSealed: segmentWriterEnded });
}
