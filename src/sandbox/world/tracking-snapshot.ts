import { LRUCache } from 'lru-cache';
import {
  findOrderStatus,
  findTrackingStep,
  formatCarrierDateTime,
  STATUS,
  type TrackingSnapshotWire,
} from '../../carriers/247express/contract.js';
import { type JsonBytes, jsonNullableString, jsonNumber, jsonString } from '../json-bytes.js';
import { billedChargesAt, rebilledAt } from './billing.js';
import type { HandlingStep, OrderPlan, StatusEvent } from './order-plan.js';

/** Bytes of serialized tracking results kept: about 5,000 answers, as many as the plans kept for lookups. */
const ANSWER_CACHE_BYTES = 16 * 1024 * 1024;

const DELIVERY_NOTE = jsonString('Đã giao hàng thành công');

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

/**
 * The order's tracking result as the carrier answers it at `at`, as JSON bytes; undefined before the
 * order exists. Written as text, field by field in the contract's order, rather than as an object
 * given to JSON.stringify: a partner's run looks each order up once, and building, serializing and
 * encoding the object would be most of the sandbox's work per lookup.
 */
export function trackingAnswerAt(plan: OrderPlan, at: number): Buffer | undefined {
  const events = eventsBy(plan, at);
  const current = events[events.length - 1];
  if (current === undefined) return undefined;
  let pickedUp: StatusEvent | undefined;
  let delivered: StatusEvent | undefined;
  let lastFailure: StatusEvent | undefined;
  for (const e of events) {
    if (pickedUp === undefined && e.status === STATUS.PICKED_UP) pickedUp = e;
    if (delivered === undefined && e.status === STATUS.DELIVERED) delivered = e;
    if (e.delayCode !== null) lastFailure = e;
  }
  if (delivered) lastFailure = undefined;
  const charges = billedChargesAt(plan, at);
  const priceInfo = charges.lines.map(
    (l) =>
      `{"serviceName":${jsonString(l.serviceName)},"serviceID":${jsonString(l.serviceID)},"cost":${jsonNumber(l.cost)}}`,
  );
  const statuses = events.map((e) => `{"time":${time(e.at)}${statusItemRest(e)}`);
  const trackings: string[] = [];
  for (const s of plan.steps) {
    if (s.at <= at)
      trackings.push(`${trackingItemStart(s)}"dateChange":${time(s.at)},"notes":${jsonNullableString(s.notes)}}`);
  }
  const text =
    (`{"errorMessage":null,"errorCode":null,"orderCode":${jsonString(plan.code)},"externalCode":${jsonNullableString(plan.externalCode)},` +
      `"acceptDate":${pickedUp ? time(pickedUp.at) : 'null'},"status":${jsonString(current.status)},` +
      `"statusName":${jsonString(statusName(current.status))},"trackingName":${jsonString(statusDisplayName(current.status))},` +
      `"delayCode":${jsonNullableString(lastFailure?.delayCode ?? null)},"delayNote":${jsonNullableString(lastFailure?.delayNote ?? null)},` +
      `"deliveryNotes":${delivered ? DELIVERY_NOTE : 'null'},"deliveryDate":${delivered ? time(delivered.at) : 'null'},` +
      `"poDeliveryID":null,"mailMan":null,"receiverName":${delivered ? jsonString(plan.receiverName) : 'null'},` +
      `"serviceTypeID":${jsonString(plan.service.id)},"mailerTypeID":${jsonString(plan.mailerTypeID)},"extraServiceName":null,` +
      `"length":${jsonNumber(plan.length)},"width":${jsonNumber(plan.width)},"height":${jsonNumber(plan.height)},` +
      `"realWeight":${jsonNumber(plan.realWeight)},"calWeight":${jsonNumber(charges.calWeight)},"weight":${jsonNumber(charges.weight)},` +
      `"quantity":${jsonNumber(plan.quantity)},"price":${jsonNumber(charges.price)},"priceFR":${jsonNumber(charges.priceFR)},` +
      `"farRegionFeeAmount":${jsonNumber(charges.farRegionFeeAmount)},"fuelFeeAmount":${jsonNumber(charges.fuelFeeAmount)},` +
      `"vatAmount":${jsonNumber(charges.vatAmount)},"totalServiceCost":${jsonNumber(charges.totalServiceCost)},` +
      `"edtFrom":null,"edtTo":null,"senderID":null,"senderName":null,"postOfficeAcceptID":null,"codAmount":${jsonNumber(plan.codAmount)},` +
      `"priceInfo":[${priceInfo.join(',')}],"statuses":[${statuses.join(',')}],"trackings":[${trackings.join(',')}],` +
      `"estimateRoutes":null,"confirmImage":null}`) as JsonBytes;
  return Buffer.from(text, 'latin1');
}

/** An instant as JSON: the carrier's form has no character JSON escapes. */
function time(ms: number): JsonBytes {
  return `"${formatCarrierDateTime(ms)}"` as JsonBytes;
}

/**
 * JSON of the parts of statuses[] and trackings[] items that the same status or step at the same
 * post office repeats from order to order, by status or step, office and province.
 */
const itemParts = new Map<string, JsonBytes>();
const ITEM_PARTS_LIMIT = 10_000;

function itemPart(key: string, build: () => string): JsonBytes {
  let part = itemParts.get(key);
  if (part === undefined) {
    part = build() as JsonBytes;
    if (itemParts.size >= ITEM_PARTS_LIMIT) itemParts.clear();
    itemParts.set(key, part);
  }
  return part;
}

/** A statuses[] item after its time, closing brace included. */
function statusItemRest(e: StatusEvent): JsonBytes {
  return itemPart(
    `status ${e.status} ${e.office.id} ${e.province.id}`,
    () =>
      `,"status":${jsonString(e.status)},"statusName":${jsonString(statusName(e.status))},` +
      `"trackingName":${jsonString(statusDisplayName(e.status))},"provinceName":${jsonString(e.province.name)},` +
      `"postOfficeName":${jsonString(e.office.name)}}`,
  );
}

/** A trackings[] item up to its date, the comma after provinceName included. */
function trackingItemStart(s: HandlingStep): JsonBytes {
  return itemPart(
    `step ${s.statusID} ${s.office.id} ${s.province.id}`,
    () =>
      `{"statusID":${jsonString(s.statusID)},"statusName":${jsonString(findTrackingStep(s.statusID)?.displayName ?? s.statusID)},` +
      `"postOfficeID":${jsonString(s.office.id)},"postOfficeName":${jsonString(s.office.name)},"provinceID":${jsonString(s.province.id)},` +
      `"provinceName":${jsonString(s.province.name)},`,
  );
}

/** The order's tracking result at `at` as an object, as a client reads it; undefined before the order exists. */
export function trackingSnapshotAt(plan: OrderPlan, at: number): TrackingSnapshotWire | undefined {
  const bytes = trackingAnswerAt(plan, at);
  return bytes === undefined ? undefined : (JSON.parse(bytes.toString('utf8')) as TrackingSnapshotWire);
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
 * and again while they stand still, and building, serializing and encoding each answer anew would be
 * a large share of the sandbox's work per lookup.
 */
export class TrackingAnswerCache {
  private readonly answers = new LRUCache<string, Buffer>({
    maxSize: ANSWER_CACHE_BYTES,
    sizeCalculation: (bytes) => bytes.length,
  });

  /** The order's tracking result at `at` as JSON bytes; undefined before the order exists. */
  snapshotJson(plan: OrderPlan, at: number): Buffer | undefined {
    const key = `${plan.code} ${snapshotStage(plan, at)}`;
    const cached = this.answers.get(key);
    if (cached) return cached;
    const bytes = trackingAnswerAt(plan, at);
    if (bytes === undefined) return undefined;
    this.answers.set(key, bytes);
    return bytes;
  }
}
