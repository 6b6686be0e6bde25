import type { NeutralStatus } from '../neutral-status.js';

/**
 * Reference data of 247Express's interface (docs/carriers/247express.md), typed.
 * Codes outside these tables are data to record, never a crash: lookups return undefined.
 */

export interface OrderStatus {
  readonly code: string;
  readonly name: string;
  /** Human-readable Vietnamese display name, as the carrier's trackingName carries it. */
  readonly displayName: string;
  readonly meaning: string;
  /** No further status change is expected. */
  readonly terminal: boolean;
  /** The status of the neutral set it is. */
  readonly neutral: NeutralStatus;
}

export const ORDER_STATUSES: readonly OrderStatus[] = [
  {
    code: '21',
    name: 'DATIEPNHAN',
    displayName: 'Đã tiếp nhận',
    meaning: 'Order just created through the API or the customer web site (received)',
    terminal: false,
    neutral: 'pending',
  },
  {
    code: '23',
    name: 'DALAYHANG',
    displayName: 'Đã lấy hàng',
    meaning: "Picked up by the carrier's staff",
    terminal: false,
    neutral: 'picked_up',
  },
  {
    code: '24',
    name: 'DANGVANCHUYEN',
    displayName: 'Đang vận chuyển',
    meaning: 'In transport by the carrier',
    terminal: false,
    neutral: 'in_transit',
  },
  {
    code: '25',
    name: 'DANGDIPHAT',
    displayName: 'Đang đi phát',
    meaning: 'Out for delivery',
    terminal: false,
    neutral: 'out_for_delivery',
  },
  {
    code: '30',
    name: 'PHATTHANHCONG',
    displayName: 'Phát thành công',
    meaning: 'Delivered successfully',
    terminal: true,
    neutral: 'delivered',
  },
  {
    code: '16',
    name: 'CHOXULY',
    displayName: 'Chờ xử lý',
    meaning: 'Delivery not successful, awaiting handling',
    terminal: false,
    neutral: 'delivery_failed',
  },
  {
    code: '27',
    name: 'CHOCHUYENHOAN',
    displayName: 'Chờ chuyển hoàn',
    meaning: 'Being returned to the customer',
    terminal: false,
    neutral: 'returning',
  },
  {
    code: '28',
    name: 'DACHUYENHOAN',
    displayName: 'Đã chuyển hoàn',
    meaning: 'Returned to the customer',
    terminal: true,
    neutral: 'returned',
  },
  { code: '19', name: 'THATLAC', displayName: 'Thất lạc', meaning: 'Lost', terminal: true, neutral: 'lost_or_damaged' },
  { code: '18', name: 'HUY', displayName: 'Hủy', meaning: 'Cancelled', terminal: true, neutral: 'cancelled' },
  {
    code: '32',
    name: 'TICHTHU',
    displayName: 'Tịch thu',
    meaning: 'Confiscated by authorities for a violation concerning the type of goods',
    terminal: true,
    neutral: 'lost_or_damaged',
  },
];

/** An older version of the carrier's documentation names status 30 this way. */
export const STATUS_NAME_ALIASES: Readonly<Record<string, string>> = { HOANTAT: '30' };

export const STATUS = {
  RECEIVED: '21',
  PICKED_UP: '23',
  IN_TRANSPORT: '24',
  OUT_FOR_DELIVERY: '25',
  DELIVERED: '30',
  AWAITING_HANDLING: '16',
  RETURNING: '27',
  RETURNED: '28',
  LOST: '19',
  CANCELLED: '18',
  CONFISCATED: '32',
} as const;

export type KnownStatusCode = (typeof STATUS)[keyof typeof STATUS];

const statusByCode = new Map(ORDER_STATUSES.map((s) => [s.code, s]));

export function findOrderStatus(code: string): OrderStatus | undefined {
  return statusByCode.get(code);
}

export function isTerminalStatus(code: string): boolean {
  return statusByCode.get(code)?.terminal ?? false;
}

export const TERMINAL_STATUS_CODES: readonly string[] = ORDER_STATUSES.filter((s) => s.terminal).map((s) => s.code);

export interface DelayReason {
  readonly code: string;
  readonly meaning: string;
  /** Vietnamese note as a postman would write it in delayNote. */
  readonly note: string;
}

export const DELAY_REASONS: readonly DelayReason[] = [
  { code: '01', meaning: 'Wrong address', note: 'Sai địa chỉ' },
  { code: '02', meaning: 'Address closed', note: 'Địa chỉ đóng cửa' },
  {
    code: '03',
    meaning: 'Address on envelope differs from address on consignment slip',
    note: 'Địa chỉ trên bì khác địa chỉ trên phiếu gửi',
  },
  { code: '04', meaning: 'Address not found', note: 'Không tìm thấy địa chỉ' },
  { code: '05', meaning: 'Off route', note: 'Ngoài tuyến phát' },
  { code: '06', meaning: 'Receiver moved address', note: 'Người nhận chuyển địa chỉ' },
  { code: '07', meaning: 'Receiver says they know nothing about this item', note: 'Người nhận không biết về bưu gửi' },
  { code: '08', meaning: 'Receiver no longer wants it', note: 'Người nhận không muốn nhận nữa' },
  { code: '09', meaning: 'Receiver busy, could not receive', note: 'Người nhận bận, không nhận được' },
  { code: '10', meaning: 'Receiver asks to receive at another time', note: 'Người nhận hẹn nhận vào thời gian khác' },
  {
    code: '11',
    meaning: "Receiver's phone locked or unreachable",
    note: 'Điện thoại người nhận khóa máy hoặc không liên lạc được',
  },
  { code: '12', meaning: 'Receiver does not answer phone', note: 'Người nhận không nghe máy' },
  { code: '13', meaning: 'Receiver absent from home or office', note: 'Người nhận đi vắng' },
  {
    code: '14',
    meaning: 'Receiver does not exist at the delivery address',
    note: 'Không có người nhận tại địa chỉ phát',
  },
  {
    code: '15',
    meaning: 'Waiting for receiver to come to the office to collect',
    note: 'Chờ người nhận đến bưu cục nhận',
  },
  { code: '16', meaning: 'Receiver asks to inspect the contents', note: 'Người nhận yêu cầu xem hàng' },
  {
    code: '20',
    meaning: "Receiver's redelivery appointment exceeds the permitted time",
    note: 'Người nhận hẹn phát lại quá thời gian cho phép',
  },
  { code: '21', meaning: 'Receiver off on Saturday', note: 'Người nhận nghỉ thứ Bảy' },
  { code: '22', meaning: 'Receiver off for public holiday', note: 'Người nhận nghỉ lễ' },
  {
    code: '24',
    meaning: 'Heavy rain, flooding, storm or natural disaster',
    note: 'Mưa lớn, ngập lụt, bão hoặc thiên tai',
  },
  {
    code: '26',
    meaning: 'Sender asks not to deliver and to return',
    note: 'Người gửi yêu cầu không phát và chuyển hoàn',
  },
  { code: '30', meaning: 'Contents damaged', note: 'Hàng hóa bị hư hỏng' },
  { code: '31', meaning: 'Part of the item lost', note: 'Mất một phần bưu gửi' },
  { code: '33', meaning: 'Item lost', note: 'Mất bưu gửi' },
  { code: '35', meaning: "Receiver's phone number wrong", note: 'Sai số điện thoại người nhận' },
  { code: '40', meaning: 'Other reason', note: 'Lý do khác' },
  { code: '41', meaning: 'Identity card lost or damaged', note: 'Mất hoặc hỏng giấy tờ tùy thân' },
  {
    code: '43',
    meaning: 'Receiver asks to hand over to another person',
    note: 'Người nhận yêu cầu giao cho người khác',
  },
  { code: '46', meaning: 'Order information wrong', note: 'Thông tin đơn hàng sai' },
  { code: '52', meaning: 'Sender changes the delivery address', note: 'Người gửi thay đổi địa chỉ phát' },
  { code: '53', meaning: 'Sender asks for destruction', note: 'Người gửi yêu cầu hủy bưu gửi' },
];

const delayByCode = new Map(DELAY_REASONS.map((d) => [d.code, d]));

export function findDelayReason(code: string): DelayReason | undefined {
  return delayByCode.get(code);
}

export interface TrackingStep {
  readonly code: string;
  readonly name: string;
  /** Vietnamese step name as the carrier's trackings[].statusName carries it. */
  readonly displayName: string;
}

/** Handling step codes seen in tracking results; the complete set is not documented. */
export const TRACKING_STEPS: readonly TrackingStep[] = [
  { code: '0', name: 'entered into system', displayName: 'Nhập hệ thống' },
  { code: '2', name: 'packed', displayName: 'Đóng túi' },
  { code: '3', name: 'being forwarded', displayName: 'Đang chuyển tiếp' },
  { code: '4', name: 'arrived at post office', displayName: 'Đến bưu cục' },
  { code: '10', name: 'handed to delivery postman', displayName: 'Giao bưu tá đi phát' },
  { code: '5', name: 'out for delivery', displayName: 'Đang phát' },
];

export const TRACKING_STEP = {
  ENTERED: '0',
  PACKED: '2',
  FORWARDED: '3',
  ARRIVED: '4',
  HANDED_TO_POSTMAN: '10',
  OUT_FOR_DELIVERY: '5',
} as const;

const stepByCode = new Map(TRACKING_STEPS.map((s) => [s.code, s]));

export function findTrackingStep(code: string): TrackingStep | undefined {
  return stepByCode.get(code);
}

export interface TrackingErrorCode {
  readonly code: string;
  readonly condition: string;
  /** A later identical request can succeed (the transient ones the client retries). */
  readonly transient: boolean;
  /**
   * An answer about the order itself, final whatever key asks or when: the order's lookup is settled.
   * The others speak of the key, the request or the carrier, and leave the order to look up again.
   */
  readonly settles: boolean;
}

export const TRACKING_ERROR_CODES: readonly TrackingErrorCode[] = [
  { code: 'MISSING_APIKEY', condition: 'API key not passed', transient: false, settles: false },
  { code: 'MISSING_ORDERCODE', condition: 'Order code not passed', transient: false, settles: false },
  { code: 'ORDERCODE_MIN_LENGTH', condition: 'Order code shorter than 5 characters', transient: false, settles: true },
  { code: 'ORDERCODE_MAX_LENGTH', condition: 'Order code longer than 20 characters', transient: false, settles: true },
  { code: 'ORDERCODE_NOT_FOUND', condition: 'Order code does not exist', transient: false, settles: true },
  {
    code: 'ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT',
    condition: 'Order code belongs to another account',
    transient: false,
    settles: true,
  },
  { code: 'APIKEY_NOT_FOUND', condition: 'API key unknown', transient: false, settles: false },
  { code: 'APIKEY_LIMIT', condition: 'Lookups exceeded 200,000 per day', transient: false, settles: false },
  {
    code: 'EXCEPTION',
    condition: 'Unspecified error; the caller contacts the carrier',
    transient: true,
    settles: false,
  },
  {
    code: 'ORDERCODE_FORMAT_EXCEPTION',
    condition: 'Order code contains special characters other than underscore and hyphen',
    transient: false,
    settles: true,
  },
  // Seen in one version of the carrier's documentation only.
  { code: 'ORDERCODE_QUERY_EXPIRED', condition: 'Lookup period exceeded', transient: false, settles: true },
];

export const TRACKING_ERROR = {
  MISSING_APIKEY: 'MISSING_APIKEY',
  MISSING_ORDERCODE: 'MISSING_ORDERCODE',
  ORDERCODE_MIN_LENGTH: 'ORDERCODE_MIN_LENGTH',
  ORDERCODE_MAX_LENGTH: 'ORDERCODE_MAX_LENGTH',
  ORDERCODE_NOT_FOUND: 'ORDERCODE_NOT_FOUND',
  ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT: 'ORDERCODE_DOES_NOT_BELONG_TO_YOUR_ACCOUNT',
  APIKEY_NOT_FOUND: 'APIKEY_NOT_FOUND',
  APIKEY_LIMIT: 'APIKEY_LIMIT',
  EXCEPTION: 'EXCEPTION',
  ORDERCODE_FORMAT_EXCEPTION: 'ORDERCODE_FORMAT_EXCEPTION',
  ORDERCODE_QUERY_EXPIRED: 'ORDERCODE_QUERY_EXPIRED',
} as const;

const errorByCode = new Map(TRACKING_ERROR_CODES.map((e) => [e.code, e]));

export function findTrackingErrorCode(code: string): TrackingErrorCode | undefined {
  return errorByCode.get(code);
}

/** The error codes that settle an order's lookup; a code the carrier documents nowhere settles nothing. */
export const SETTLING_TRACKING_ERRORS: readonly string[] = TRACKING_ERROR_CODES.filter((e) => e.settles).map(
  (e) => e.code,
);

/** Price item serviceID values seen in the carrier's results. */
export const PRICE_SERVICE = {
  MAIN: 'DE',
  FAR_REGION: 'VSVX',
  FUEL: 'Fuel',
  VAT: 'VAT',
} as const;

/**
 * The pricing relations of the carrier's published price example: CalWeight = L x W x H / 6000,
 * Weight = max(RealWeight, CalWeight), fuel 20% of the main charge, VAT 10% of main plus fuel and fees,
 * the total the sum of the lines.
 */
export const PUBLISHED_PRICING = {
  volumetricDivisor: 6000,
  fuelShare: '0.2',
  vatShare: '0.1',
} as const;

export const DOCUMENTED_LIMITS = {
  lookupsPerKeyPerDay: 200_000,
  lookupsPerDay: 3_000_000,
  orderCodeMinLength: 5,
  orderCodeMaxLength: 20,
} as const;

/** Kind of consignment (mailerTypeID). */
export const MAILER_TYPES: Readonly<Record<string, string>> = { HH: 'goods', TL: 'documents' };

/** A failed delivery attempt: the parcel awaits handling. */
export const FAILED_ATTEMPT_STATUSES: readonly string[] = [STATUS.AWAITING_HANDLING];
