import { CARRIER_UTC_OFFSET_MINUTES, carrierDayOf, DAY_MS, STATUS } from '../../carriers/247express/contract.js';
import { billedChargesAt } from './billing.js';
import type { Account, OrderPlan } from './order-plan.js';
import type { SandboxWorld } from './sandbox-world.js';
import { deriveSeed, SeededRandom } from './seeded-random.js';

/** The days of a month each account's weekly payout batch is paid on. */
const BATCH_DAYS = [7, 14, 21, 28] as const;
/** A batch pays the COD of the orders delivered by the end of the carrier day this many days before it. */
const BATCH_LAG_DAYS = 2;
/** When, on its day, a batch is paid (carrier time). */
const BATCH_HOUR = 10;
/** The collection fee withheld from the COD: 1%, in hundreds of dong. */
const COD_FEE_SHARE = 0.01;
/** An unpaid delivered order is overdue this many days after its delivery (the report's default). */
const OVERDUE_DAYS = 7;

/** How an order ends without being delivered: a COD paid for one of them is paid_not_delivered. */
const NOT_DELIVERED_ENDS = [STATUS.RETURNED, STATUS.LOST, STATUS.CANCELLED] as const;

/** The checks of `report cod` the sandbox plants an anomaly of, one each per account and month where an order fits. */
export const PLANTED_PAYOUT_CHECKS = [
  'unpaid_delivered',
  'line_net',
  'batch_total',
  'fees_withheld',
  'paid_not_delivered',
  'paid_twice',
  'shop_cod',
] as const;
export type PlantedPayoutCheck = (typeof PLANTED_PAYOUT_CHECKS)[number];

/** One line of a statement, whole VND; fees by the template's columns. */
export interface StatementLine {
  readonly batchId: string;
  readonly batchDay: string;
  readonly orderCode: string;
  readonly codCollected: number;
  readonly shipping: number;
  readonly remoteArea: number;
  readonly fuel: number;
  readonly vat: number;
  readonly codFee: number;
  readonly debts: number;
  readonly netPaid: number;
  /** The batch's stated total, on each of its lines. */
  readonly batchTotal: number;
}

/**
 * A planted anomaly as the check that must flag it sees it: the batch or order (or both) of the
 * finding and its money at stake. A line's short payment also makes its batch's net short: the truth
 * lists that batch_net finding beside it (`plantedAs` line_net).
 */
export interface PayoutAnomalyTruth {
  readonly check: PlantedPayoutCheck | 'batch_net';
  readonly carrier: '247express';
  readonly account: string;
  readonly batchId: string | null;
  readonly orderCode: string | null;
  readonly atStake: number;
  readonly plantedAs: PlantedPayoutCheck;
}

export interface PayoutMonth {
  readonly month: string;
  readonly lines: readonly StatementLine[];
  readonly anomalies: readonly PayoutAnomalyTruth[];
}

/** The first instant of a carrier day (YYYY-MM-DD). */
function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) - CARRIER_UTC_OFFSET_MINUTES * 60_000;
}

function roundTo100(value: number): number {
  return Math.round(value / 100) * 100;
}

/** A batch of one account: its id, day, when it is paid and the deliveries it pays (before `cutoff`). */
interface Batch {
  readonly id: string;
  readonly day: string;
  readonly paidAt: number;
  readonly cutoff: number;
}

function batchesOf(account: Account, month: string, now: number): Batch[] {
  return BATCH_DAYS.map((d) => {
    const day = `${month}-${String(d).padStart(2, '0')}`;
    return {
      id: `BK${account.index + 1}-${day.replaceAll('-', '')}`,
      day,
      paidAt: dayStart(day) + BATCH_HOUR * 3_600_000,
      cutoff: dayStart(day) - (BATCH_LAG_DAYS - 1) * DAY_MS,
    };
  }).filter((b) => b.paidAt <= now);
}

/** When the order reached `status`, if it has by `at`. */
function reachedAt(plan: OrderPlan, status: string, at: number): number | undefined {
  return plan.events.find((e) => e.status === status && e.at <= at)?.at;
}

/** A COD line of an order as the carrier pays it in `batch`: its COD less the charges it billed and the collection fee. */
function codLine(plan: OrderPlan, batch: Batch): Omit<StatementLine, 'batchTotal'> {
  const billed = billedChargesAt(plan, batch.paidAt);
  const remoteArea = Math.round(billed.farRegionFeeAmount);
  const fuel = Math.round(billed.fuelFeeAmount);
  const vat = Math.round(billed.vatAmount);
  const shipping = Math.round(billed.totalServiceCost) - remoteArea - fuel - vat;
  const codFee = roundTo100(plan.codAmount * COD_FEE_SHARE);
  return {
    batchId: batch.id,
    batchDay: batch.day,
    orderCode: plan.code,
    codCollected: plan.codAmount,
    shipping,
    remoteArea,
    fuel,
    vat,
    codFee,
    debts: 0,
    netPaid: plan.codAmount - shipping - remoteArea - fuel - vat - codFee,
  };
}

/**
 * The payout statements of `month` (YYYY-MM) for 247Express, as of `now`: per account, a batch on the
 * 7th, 14th, 21st and 28th (those paid by `now`), each paying the COD of the orders delivered by the
 * end of the carrier day two days before it and not paid yet, less the charges their tracking answer bills
 * and a 1% collection fee. Per account, one anomaly of each check is planted in an order with no
 * charge anomaly (seeded: the same world and month plant the same), and listed in the truth.
 */
export function payoutMonth(world: SandboxWorld, month: string, now: number): PayoutMonth {
  const lines: StatementLine[] = [];
  const anomalies: PayoutAnomalyTruth[] = [];
  const today = carrierDayOf(now);
  for (const account of world.accounts) {
    const batches = batchesOf(account, month, now);
    if (batches.length === 0) continue;
    const rng = new SeededRandom(
      deriveSeed(world.options.seed, 'payouts', account.index, Number(month.replace('-', ''))),
    );
    const amount = () => rng.int(5, 50) * 1000;
    const truth = (
      check: PayoutAnomalyTruth['check'],
      plantedAs: PlantedPayoutCheck,
      where: { batchId?: string; orderCode?: string },
      atStake: number,
    ) =>
      anomalies.push({
        check,
        carrier: '247express',
        account: account.alias,
        batchId: where.batchId ?? null,
        orderCode: where.orderCode ?? null,
        atStake,
        plantedAs,
      });

    // Each COD order delivered (or, for a COD paid though not delivered, ended otherwise) before the last cutoff, in its batch.
    const last = batches[batches.length - 1]!;
    const delivered: { plan: OrderPlan; batch: Batch }[] = [];
    const returned: { plan: OrderPlan; batch: Batch }[] = [];
    for (const plan of world.orders(account.index)) {
      if (plan.codAmount <= 0) continue;
      const at = reachedAt(plan, STATUS.DELIVERED, last.cutoff - 1);
      const back = NOT_DELIVERED_ENDS.map((status) => reachedAt(plan, status, last.cutoff - 1)).find(
        (time) => time !== undefined,
      );
      const when = at ?? back;
      if (when === undefined) continue;
      const batch = batches.find((b) => when < b.cutoff)!;
      (at === undefined ? returned : delivered).push({ plan, batch });
    }
    const clean = delivered.filter(({ plan }) => plan.anomaly === null);
    const picked = new Set<string>();
    const pick = <T extends { plan: OrderPlan }>(from: readonly T[], fits: (item: T) => boolean = () => true) => {
      const candidates = from.filter((item) => !picked.has(item.plan.code) && fits(item));
      if (candidates.length === 0) return undefined;
      const chosen = rng.pick(candidates);
      picked.add(chosen.plan.code);
      return chosen;
    };

    const overdue = pick(clean, ({ plan }) => {
      const day = carrierDayOf(reachedAt(plan, STATUS.DELIVERED, now)!);
      return (dayStart(today) - dayStart(day)) / DAY_MS > OVERDUE_DAYS;
    });
    if (overdue)
      truth('unpaid_delivered', 'unpaid_delivered', { orderCode: overdue.plan.code }, overdue.plan.codAmount);
    const short = pick(clean);
    const shortBy = amount();
    const overcharged = pick(clean);
    const overchargedBy = amount();
    const wrongCod = pick(clean, ({ plan }) => plan.codAmount > 50_000);
    const wrongCodBy = amount();
    const twice = pick(clean, ({ batch }) => batch !== last);
    const paidBack = returned.filter(({ plan }) => plan.anomaly === null && !picked.has(plan.code));
    const notDelivered = paidBack.length === 0 ? undefined : rng.pick(paidBack);
    const misstated = rng.pick(batches);
    const misstatedBy = amount();

    const accountLines: Omit<StatementLine, 'batchTotal'>[] = [];
    for (const { plan, batch } of [...delivered, ...(notDelivered ? [notDelivered] : [])]) {
      if (plan === overdue?.plan) continue;
      const line = codLine(plan, batch);
      if (plan === short?.plan) {
        accountLines.push({ ...line, netPaid: line.netPaid - shortBy });
        truth('line_net', 'line_net', { batchId: batch.id, orderCode: plan.code }, shortBy);
        truth('batch_net', 'line_net', { batchId: batch.id }, shortBy);
      } else if (plan === overcharged?.plan) {
        accountLines.push({ ...line, shipping: line.shipping + overchargedBy, netPaid: line.netPaid - overchargedBy });
        truth('fees_withheld', 'fees_withheld', { orderCode: plan.code }, overchargedBy);
      } else if (plan === wrongCod?.plan) {
        accountLines.push({
          ...line,
          codCollected: line.codCollected - wrongCodBy,
          netPaid: line.netPaid - wrongCodBy,
        });
        truth('shop_cod', 'shop_cod', { orderCode: plan.code }, wrongCodBy);
      } else if (plan === twice?.plan) {
        accountLines.push(line);
        const next = batches[batches.indexOf(batch) + 1]!;
        const again = { ...line, batchId: next.id, batchDay: next.day, shipping: 0, remoteArea: 0, fuel: 0, vat: 0 };
        accountLines.push({ ...again, codFee: 0, netPaid: plan.codAmount });
        truth('paid_twice', 'paid_twice', { orderCode: plan.code }, plan.codAmount);
      } else {
        accountLines.push(line);
        if (plan === notDelivered?.plan)
          truth('paid_not_delivered', 'paid_not_delivered', { orderCode: plan.code }, plan.codAmount);
      }
    }
    for (const batch of batches) {
      const ofBatch = accountLines.filter((l) => l.batchId === batch.id);
      if (ofBatch.length === 0) continue;
      const paid = ofBatch.reduce((sum, l) => sum + l.netPaid, 0);
      const stated = batch === misstated ? paid + misstatedBy : paid;
      if (batch === misstated) truth('batch_total', 'batch_total', { batchId: batch.id }, misstatedBy);
      lines.push(...ofBatch.map((l) => ({ ...l, batchTotal: stated })));
    }
  }
  return { month, lines, anomalies };
}

/** The header of 247Express's statement template (docs/payouts.md), in its order. */
export const STATEMENT_HEADER = [
  'Mã phiên',
  'Ngày thanh toán',
  'Mã vận đơn',
  'Loại dòng',
  'Tiền thu hộ',
  'Cước chính',
  'Phí vùng xa',
  'Phụ phí xăng dầu',
  'VAT',
  'Phí thu hộ',
  'Công nợ trừ',
  'Thực trả',
  'Tổng phiên',
] as const;

/** Whole VND as statements write it: `1.250.000`, `-30.000`. */
function vnd(amount: number): string {
  const digits = String(Math.abs(amount)).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return amount < 0 ? `-${digits}` : digits;
}

/** A statement's CSV in the template: one line per statement line, dates DD/MM/YYYY, amounts `1.250.000`. */
export function statementCsv(lines: readonly StatementLine[]): string {
  const rows = lines.map((l) => {
    const [year, monthOf, day] = l.batchDay.split('-');
    return [
      l.batchId,
      `${day}/${monthOf}/${year}`,
      l.orderCode,
      'Thu hộ',
      ...[l.codCollected, l.shipping, l.remoteArea, l.fuel, l.vat, l.codFee, l.debts, l.netPaid, l.batchTotal].map(vnd),
    ];
  });
  // No value holds a comma, a quote or a line break: the amounts group with points.
  return `${[STATEMENT_HEADER.join(','), ...rows.map((r) => r.join(','))].join('\r\n')}\r\n`;
}
