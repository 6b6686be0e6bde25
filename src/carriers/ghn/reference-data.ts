import type { CarrierDelayReason, CarrierQuota, CarrierStatus } from '../carrier-definition.js';

/**
 * Reference data of GHN's partner API (docs/carriers/ghn.md), typed. Codes outside these tables are
 * data to record, never a crash.
 */

/** A GHN status is a lower-case word; its code and name are the same text. */
function status(
  code: string,
  displayName: string,
  meaning: string,
  neutral: CarrierStatus['neutral'],
  terminal = false,
): CarrierStatus {
  return { code, name: code, displayName, meaning, neutral, terminal };
}

export const GHN_STATUSES: readonly CarrierStatus[] = [
  status('ready_to_pick', 'Mới tạo đơn hàng', 'Order created, waiting for pick-up', 'pending'),
  status('picking', 'Nhân viên đang lấy hàng', 'A courier is on the way to pick it up', 'pending'),
  status('money_collect_picking', 'Đang thu tiền người gửi', 'Collecting money from the sender at pick-up', 'pending'),
  status('picked', 'Nhân viên đã lấy hàng', 'Picked up from the sender', 'picked_up'),
  status('storing', 'Hàng đang nằm ở kho', 'Held at a GHN hub', 'in_transit'),
  status('transporting', 'Đang luân chuyển hàng', 'Moving between hubs', 'in_transit'),
  status('sorting', 'Đang phân loại hàng hóa', 'Being sorted', 'in_transit'),
  status('delivering', 'Nhân viên đang giao cho người nhận', 'Out for delivery', 'out_for_delivery'),
  status(
    'money_collect_delivering',
    'Nhân viên đang thu tiền người nhận',
    'Collecting money from the receiver',
    'out_for_delivery',
  ),
  status('delivered', 'Nhân viên đã giao hàng thành công', 'Delivered', 'delivered', true),
  status('delivery_fail', 'Nhân viên giao hàng thất bại', 'A delivery attempt failed', 'delivery_failed'),
  status(
    'waiting_to_return',
    'Đang đợi trả hàng về cho người gửi',
    'Held after failed attempts: delivered again or returned',
    'delivery_failed',
  ),
  status('return', 'Trả hàng', 'Return to the sender started', 'returning'),
  status('return_transporting', 'Đang luân chuyển hàng trả', 'Return moving between hubs', 'returning'),
  status('return_sorting', 'Đang phân loại hàng trả', 'Return being sorted', 'returning'),
  status('returning', 'Nhân viên đang đi trả hàng', 'A courier is returning it to the sender', 'returning'),
  status('return_fail', 'Nhân viên trả hàng thất bại', 'A return attempt failed', 'returning'),
  status('returned', 'Nhân viên trả hàng thành công', 'Returned to the sender', 'returned', true),
  status('cancel', 'Hủy đơn hàng', 'Cancelled', 'cancelled', true),
  status('exception', 'Đơn hàng ngoại lệ không nằm trong quy trình', 'Out of the normal process', 'unknown'),
  status('damage', 'Hàng bị hư hỏng', 'Damaged', 'lost_or_damaged', true),
  status('lost', 'Hàng bị mất', 'Lost', 'lost_or_damaged', true),
];

const statusByCode = new Map(GHN_STATUSES.map((s) => [s.code, s]));

export function findGhnStatus(code: string): CarrierStatus | undefined {
  return statusByCode.get(code);
}

export interface GhnFailureReason extends CarrierDelayReason {
  /** As GHN sends it in a webhook's ReasonCode, e.g. `GHN-DFC1A0`. */
  readonly code: string;
  /** The leg of the journey the attempt failed on. */
  readonly leg: 'pickup' | 'delivery' | 'return';
  readonly meaning: string;
}

function reasons(leg: GhnFailureReason['leg'], list: readonly (readonly [string, string])[]): GhnFailureReason[] {
  // GHN's webhook carries its own text of the reason in `Reason`; no list of those texts is published.
  return list.map(([code, meaning]) => ({ code: `GHN-${code}`, leg, meaning, note: null }));
}

/** Failed pick-up, delivery and return reasons. */
export const GHN_FAILURE_REASONS: readonly GhnFailureReason[] = [
  ...reasons('pickup', [
    ['PFA1A0', 'Sender asks to pick up at another time'],
    ['PFA2A2', 'Wrong sender information'],
    ['PFA2A1', 'Sender unreachable'],
    ['PFA2A3', 'Sender does not answer the phone'],
    ['PFA1A1', 'Sender drops the parcel at a GHN office'],
    ['PCB0B2', 'Size or weight differs from the order'],
    ['PFA4A1', 'Packing does not meet the rules'],
    ['PCB0B1', 'Sender cancels'],
    ['PFA4A2', 'Prohibited goods'],
    ['PFA3A2', 'Courier incident'],
  ]),
  ...reasons('delivery', [
    ['DFC1A0', 'Receiver asks to deliver at another time'],
    ['DFC1A2', 'Receiver unreachable or phone blocked'],
    ['DFC1A4', 'Receiver does not answer the phone'],
    ['DCD0A1', 'Wrong receiver information'],
    ['DFC1A1', 'Receiver changes the delivery address'],
    ['DFC1A7', 'Receiver refuses: not allowed to view or try the goods'],
    ['DCD0A6', 'Wrong goods'],
    ['DCD0A7', 'Wrong COD amount'],
    ['DCD0A5', 'Goods damaged'],
    ['DCD1A5', 'Receiver has no money'],
    ['DCD0A8', 'Receiver changed their mind'],
    ['DCD1A1', 'Receiver never ordered it'],
    ['DFC1A6', 'Courier incident'],
    ['DCD1A3', 'Broken in transit'],
  ]),
  ...reasons('return', [
    ['RFE0A0', 'Sender asks to return at another time'],
    ['RFE0A1', 'Sender changes the return address'],
    ['RFE0A6', 'Sender does not answer the phone'],
    ['RFE0A3', 'Wrong goods'],
    ['RFE0A4', 'Goods damaged'],
    ['RFE0A5', 'Courier incident'],
  ]),
];

const reasonByCode = new Map(GHN_FAILURE_REASONS.map((r) => [r.code, r]));

/** A failure reason by its code, with or without GHN's `GHN-` prefix. */
export function findGhnFailureReason(code: string): GhnFailureReason | undefined {
  return reasonByCode.get(code.startsWith('GHN-') ? code : `GHN-${code}`);
}

/** GHN converts dimensions to weight as length × width × height / 5 (cm to grams). */
export const GHN_VOLUMETRIC_DIVISOR = 5;

/** In cm³ per kilogram, as the charge checks compare weights in kilograms. */
export const GHN_VOLUMETRIC_DIVISOR_KG = GHN_VOLUMETRIC_DIVISOR * 1000;

/**
 * GHN publishes no rate limit and no daily quota: these are the product's cautious limits, so that a
 * run with nothing set does not hammer an API whose limits nobody knows. A night of 10 lookups a
 * second (two calls each) tracks 36,000 orders an hour; a shop needing more sets its own.
 */
export const GHN_QUOTA: CarrierQuota = {
  callsPerKeyPerDay: 200_000,
  callsPerDay: 1_000_000,
  callsPerSecond: 20,
  documented: false,
};

/**
 * GHN charges an order from its pick-up on: its fees are asked once its status is past the pending
 * ones (an unknown status is asked too).
 */
export function ghnFeesDue(statusCode: string): boolean {
  return GHN_STATUSES.find((s) => s.code === statusCode)?.neutral !== 'pending';
}

/** A delivery attempt that failed; `waiting_to_return` is the hold after such attempts, not one more. */
export const GHN_FAILED_ATTEMPT_STATUSES: readonly string[] = ['delivery_fail'];
