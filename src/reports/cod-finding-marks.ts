import { epochMsToInstant } from '../carriers/carrier-time.js';
import { UserError } from '../errors/user-error.js';
import { listColumnNames } from '../sources/source-rows.js';
import { type TableSource, tableName, tableRows } from '../sources/table-rows.js';
import {
  FINDING_MARK_KINDS,
  type FindingKey,
  type FindingMark,
  type FindingMarkChanges,
  type FindingMarkKind,
  FindingMarkStore,
} from '../warehouse/finding-mark-store.js';
import { unformulaSafeText } from '../warehouse/formula-safe-text.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { COD_CHECKS, type CodRules, codTables, FINDING_AMOUNTS_QUERY } from './cod-report.js';
import { loadPartnerRecords, type PartnerRecordsSource } from './partner-records.js';
import { partnerCodQuery } from './reconcile-report.js';
import { prepareReportTables } from './report-export.js';

/** A mark asked for a finding: on the command line, or on a row of a report read back. */
export interface MarkRequest {
  readonly key: FindingKey;
  readonly mark: FindingMarkKind;
  readonly note: string;
  readonly origin: string;
}

/** A mark refused, and why. */
export interface MarkRejection {
  readonly origin: string;
  readonly reason: string;
}

export type MarkItem =
  | { readonly kind: 'mark'; readonly request: MarkRequest }
  | { readonly kind: 'rejected'; readonly rejection: MarkRejection }
  /** A row of a report that asks for no mark: its finding is left as it is. */
  | { readonly kind: 'blank' };

export interface MarkingSummary extends FindingMarkChanges {
  readonly dryRun: boolean;
  /** Rows of a report with no mark, their findings left as they are. */
  readonly blank: number;
  readonly rejected: number;
  readonly rejections: readonly MarkRejection[];
}

/** How a finding is named in messages: `fees_withheld of 247express order EXF0001`. */
export function findingName(key: FindingKey): string {
  const batch = key.batchId === '' ? '' : ` batch ${key.batchId}`;
  const order = key.orderCode === '' ? '' : ` order ${key.orderCode}`;
  return `${key.finding} of ${key.carrier}${batch}${order}`;
}

function keyText(key: FindingKey): string {
  return JSON.stringify([key.finding, key.carrier, key.batchId, key.orderCode]);
}

/** What the COD report finds now, as `report cod` would with the same rules: each finding's money at stake by its identity. */
export interface CodFindingsNow {
  readonly rules: CodRules;
  /** The carrier day the report is run on, YYYY-MM-DD. */
  readonly today: string;
  /** The shop's own records, for the shop_cod findings. */
  readonly shopRecords?: PartnerRecordsSource | undefined;
}

async function findingAmounts(warehouse: Warehouse, now: CodFindingsNow): Promise<Map<string, number>> {
  if (now.shopRecords !== undefined) await loadPartnerRecords(warehouse.connection, now.shopRecords);
  const report = codTables(
    now.rules,
    {},
    `DATE '${now.today}'`,
    now.shopRecords === undefined ? undefined : partnerCodQuery(),
  );
  await prepareReportTables(warehouse, report);
  const rows = (await warehouse.readAll(FINDING_AMOUNTS_QUERY)).getRowObjectsJS();
  return new Map(
    rows.map((r) => [
      keyText({
        finding: String(r.finding),
        carrier: String(r.carrier),
        batchId: String(r.batch_id),
        orderCode: String(r.order_code),
      }),
      Number(r.at_stake),
    ]),
  );
}

/**
 * Marks COD findings: each mark asked names a finding the report finds now (else it is rejected, and
 * so is a second mark of one finding), the marks are compared with the stored ones and, unless
 * `dryRun`, swapped in, a mark replaced kept in the history.
 */
export async function markCodFindings(options: {
  readonly warehouse: Warehouse;
  readonly items: AsyncIterable<MarkItem> | Iterable<MarkItem>;
  readonly now: CodFindingsNow;
  readonly markedBy: string;
  readonly nowMs: number;
  readonly dryRun: boolean;
}): Promise<MarkingSummary> {
  const amounts = await findingAmounts(options.warehouse, options.now);
  const marks: FindingMark[] = [];
  const markedAt = new Map<string, string>();
  const rejections: MarkRejection[] = [];
  let blank = 0;
  for await (const item of options.items) {
    if (item.kind === 'blank') {
      blank++;
      continue;
    }
    if (item.kind === 'rejected') {
      rejections.push(item.rejection);
      continue;
    }
    const { key, origin } = item.request;
    const text = keyText(key);
    const atStake = amounts.get(text);
    const earlier = markedAt.get(text);
    if (atStake === undefined) rejections.push({ origin, reason: `the cod report finds no ${findingName(key)}` });
    else if (earlier !== undefined)
      rejections.push({ origin, reason: `${findingName(key)} is marked already (${earlier})` });
    else {
      markedAt.set(text, origin);
      marks.push({
        ...key,
        mark: item.request.mark,
        note: item.request.note,
        markedBy: options.markedBy,
        atStake,
        origin,
      });
    }
  }
  const { store, changes } = await FindingMarkStore.plan(options.warehouse, marks);
  if (!options.dryRun) await store.commit(epochMsToInstant(options.nowMs));
  return { ...changes, dryRun: options.dryRun, blank, rejected: rejections.length, rejections };
}

/** The checks a finding may be of, by name. */
const CHECK_NAMES: ReadonlySet<string> = new Set(COD_CHECKS.map((c) => c.name));

/**
 * The mark asked on the command line, its finding named by its check and what the check is about:
 * an order, a batch, or a line (a batch and an order). A name that does not fit its check is refused.
 */
export function commandLineMark(asked: {
  readonly check: string;
  readonly carrier: string;
  readonly batch?: string | undefined;
  readonly order?: string | undefined;
  readonly mark: FindingMarkKind;
  readonly note: string;
}): MarkRequest {
  const check = COD_CHECKS.find((c) => c.name === asked.check);
  if (check === undefined)
    throw new UserError(`--check: ${asked.check} is no COD check; the checks are ${[...CHECK_NAMES].join(', ')}`);
  if (check.per === 'deposit') throw new UserError(`${check.name}: a finding of a bank deposit, which is not marked`);
  const needsBatch = check.per !== 'order';
  const needsOrder = check.per !== 'batch';
  const what = { order: 'an order (--order)', batch: 'a batch (--batch)', line: 'a line (--batch and --order)' }[
    check.per
  ];
  if (needsBatch !== (asked.batch !== undefined) || needsOrder !== (asked.order !== undefined))
    throw new UserError(
      `${check.name}: a finding of ${what}; give ${needsBatch && needsOrder ? 'both' : 'that alone'}`,
    );
  return {
    key: { finding: check.name, carrier: asked.carrier, batchId: asked.batch ?? '', orderCode: asked.order ?? '' },
    mark: asked.mark,
    note: asked.note,
    origin: 'command line',
  };
}

/** The columns of the cod report a mark is read from, and the note's. */
const KEY_COLUMNS = ['finding', 'carrier', 'batch_id', 'order_code'] as const;
const MARK_COLUMN = 'mark';
const NOTE_COLUMN = 'mark_note';

function isMarkKind(text: string): text is FindingMarkKind {
  return (FINDING_MARK_KINDS as readonly string[]).includes(text);
}

/**
 * The marks of a cod report's rows read back (its CSV, or the `cod` sheet of its workbook) with the
 * `mark` column filled in (and `mark_note`): a row with no mark asks for none; one whose mark is not a
 * kind, or that has no note, is rejected. A file without the finding's columns or the mark is refused whole.
 */
export async function* reportRowMarks(source: TableSource): AsyncGenerator<MarkItem> {
  const name = tableName(source);
  let at: Record<string, number> = {};
  const check = (names: readonly string[]) => {
    const lower = names.map((n) => n.trim().toLowerCase());
    const missing = [...KEY_COLUMNS, MARK_COLUMN, NOTE_COLUMN].filter((c) => !lower.includes(c));
    if (missing.length > 0)
      throw new UserError(
        `${name}: not rows of the cod report with their marks: it lacks ${missing.map((m) => JSON.stringify(m)).join(', ')}; its columns are ${listColumnNames(names)}`,
      );
    at = Object.fromEntries([...KEY_COLUMNS, MARK_COLUMN, NOTE_COLUMN].map((c) => [c, lower.indexOf(c)]));
  };
  for await (const item of tableRows(source, check)) {
    if (item.kind === 'rejected') {
      yield { kind: 'rejected', rejection: { origin: item.rejection.origin, reason: item.rejection.reason } };
      continue;
    }
    const { values, origin } = item.row;
    const cell = (column: string) => {
      const value = values[at[column]!];
      return value === null || value === undefined ? '' : unformulaSafeText(String(value).trim());
    };
    const mark = cell(MARK_COLUMN).toLowerCase();
    if (mark === '') {
      yield { kind: 'blank' };
      continue;
    }
    const note = cell(NOTE_COLUMN);
    const reason = !isMarkKind(mark)
      ? `column "mark": "${mark}" is not a mark; the marks are ${FINDING_MARK_KINDS.join(', ')}`
      : note === ''
        ? 'column "mark_note": a mark needs a note'
        : cell('finding') === '' || cell('carrier') === ''
          ? 'columns "finding" and "carrier": empty'
          : undefined;
    if (reason !== undefined) {
      yield { kind: 'rejected', rejection: { origin, reason } };
      continue;
    }
    yield {
      kind: 'mark',
      request: {
        key: {
          finding: cell('finding'),
          carrier: cell('carrier'),
          batchId: cell('batch_id'),
          orderCode: cell('order_code'),
        },
        mark: mark as FindingMarkKind,
        note,
        origin,
      },
    };
  }
}
