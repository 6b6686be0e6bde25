import { LRUCache } from 'lru-cache';
import {
  findOrderStatus,
  findTrackingStep,
  formatCarrierDateTime,
  STATUS,
  type TrackingSnapshotWire,
} from '../../carrier/contract.js';
import { billedChargesAt, rebilledAt } from './billing.js';
import type { OrderPlan, StatusEvent } from './order-plan.js';

/** Bytes of serialized tracking results kept; the default world's orders fit many times over. */
const ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

export function statusName(code: string): string {
  return findOrderStatus(code)?.name ?? code;
}

export function statusDisplayName(code: string): string {
  return findOrderStatus(code)?.displayName ?? code;
}

/** The events of the order that have happened by `at`, oldest first. */
export function eventsBy(plan: OrderPlan, at: number): StatusEvent[] {
  return plan.events.filter((e) => e.at <= at);
}

/** The order's tracking result as the carrier answers it at `at`; undefined before the order exists. */
export function trackingSnapshotAt(plan: OrderPlan, at: number): TrackingSnapshotWire | undefined {
  const events = eventsBy(plan, at);
  const current = events[events.length - 1];
  if (current === undefined) return undefined;
  const pickedUp = events.find((e) => e.status === STATUS.PICKED_UP);
  const delivered = events.find((e) => e.status === STATUS.DELIVERED);
  const lastFailure = delivered ? undefined : [...events].reverse().find((e) => e.delayCode !== null);
  const charges = billedChargesAt(plan, at);
  return {
    errorMessage: null,
    errorCode: null,
    orderCode: plan.code,
    externalCode: plan.externalCode,
    acceptDate: pickedUp ? formatCarrierDateTime(pickedUp.at) : null,
    status: current.status,
    statusName: statusName(current.status),
    trackingName: statusDisplayName(current.status),
    delayCode: lastFailure?.delayCode ?? null,
    delayNote: lastFailure?.delayNote ?? null,
    deliveryNotes: delivered ? 'Đã giao hàng thành công' : null,
    deliveryDate: delivered ? formatCarrierDateTime(delivered.at) : null,
    poDeliveryID: null,
    mailMan: null,
    receiverName: delivered ? plan.receiverName : null,
    serviceTypeID: plan.service.id,
    mailerTypeID: plan.mailerTypeID,
    extraServiceName: null,
    length: plan.length,
    width: plan.width,
    height: plan.height,
    realWeight: plan.realWeight,
    calWeight: charges.calWeight,
    weight: charges.weight,
    quantity: plan.quantity,
    price: charges.price,
    priceFR: charges.priceFR,
    farRegionFeeAmount: charges.farRegionFeeAmount,
    fuelFeeAmount: charges.fuelFeeAmount,
    vatAmount: charges.vatAmount,
    totalServiceCost: charges.totalServiceCost,
    edtFrom: null,
    edtTo: null,
    senderID: null,
    senderName: null,
    postOfficeAcceptID: null,
    codAmount: plan.codAmount,
    priceInfo: charges.lines.map((l) => ({ serviceName: l.serviceName, serviceID: l.serviceID, cost: l.cost })),
    statuses: events.map((e) => ({
      time: formatCarrierDateTime(e.at),
      status: e.status,
      statusName: statusName(e.status),
      trackingName: statusDisplayName(e.status),
      provinceName: e.province.name,
      postOfficeName: e.office.name,
    })),
    trackings: plan.steps
      .filter((s) => s.at <= at)
      .map((s) => ({
        statusID: s.statusID,
        statusName: findTrackingStep(s.statusID)?.displayName ?? s.statusID,
        postOfficeID: s.office.id,
        postOfficeName: s.office.name,
        provinceID: s.province.id,
        provinceName: s.province.name,
        dateChange: formatCarrierDateTime(s.at),
        notes: s.notes,
      })),
    estimateRoutes: null,
    confirmImage: null,
  };
}

function countBy(items: readonly { readonly at: number }[], at: number): number {
  let count = 0;
  for (const item of items) if (item.at <= at) count++;
  return count;
}

/**
 * The stage of its life the order is in at `at`: how many of its status changes and handling steps
 * have happened, and whether it has been re-billed. Its tracking result changes only from stage to stage.
 */
export function snapshotStage(plan: OrderPlan, at: number): string {
  const rebillAt = rebilledAt(plan);
  return `${countBy(plan.events, at)}.${countBy(plan.steps, at)}.${rebillAt !== undefined && at >= rebillAt ? 1 : 0}`;
}

/**
 * Tracking results as the JSON bytes sent, by order and stage. Partners look the same orders up again
 * and again while they stand still; building, serializing and encoding each answer anew took about a
 * quarter of the sandbox's time per lookup.
 */
export class TrackingAnswerCache {
  private readonly answers = new LRUCache<string, Buffer>({ maxSize: ANSWER_CACHE_BYTES, sizeCalculation: (bytes) => bytes.length });

  /** The order's tracking result at `at` as JSON bytes; undefined before the order exists. */
  snapshotJson(plan: OrderPlan, at: number): Buffer | undefined {
    const key = `${plan.code} ${snapshotStage(plan, at)}`;
    const cached = this.answers.get(key);
    if (cached) return cached;
    const snapshot = trackingSnapshotAt(plan, at);
    if (!snapshot) return undefined;
    const bytes = Buffer.from(JSON.stringify(snapshot));
    this.answers.set(key, bytes);
    return bytes;
  }
}
