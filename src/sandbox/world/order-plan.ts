import { DELAY_REASONS, STATUS, TRACKING_STEP } from '../../carriers/247express/contract.js';
import { PERSON_NAMES, type PostOffice, PROVINCES, type Province } from './geography.js';
import type { SeededRandom } from './seeded-random.js';
import { SERVICE_TYPES, type ServiceType } from './tariff.js';

/** One status change of an order, with where it happened. */
export interface StatusEvent {
  readonly status: string;
  readonly at: number;
  readonly province: Province;
  readonly office: PostOffice;
  readonly delayCode: string | null;
  readonly delayNote: string | null;
}

/** One handling step (trackings[] element) of an order. */
export interface HandlingStep {
  readonly statusID: string;
  readonly at: number;
  readonly province: Province;
  readonly office: PostOffice;
  readonly notes: string | null;
}

export const ANOMALY_KINDS = [
  'total_mismatch',
  'wrong_cal_weight',
  'wrong_chargeable_weight',
  'wrong_fuel',
  'wrong_vat',
  'far_region_fee_without_line',
  'return_charge_not_returned',
  'charge_on_cancelled',
  'overbilled_vs_quote',
  'total_changed_after_delivery',
] as const;

export type AnomalyKind = (typeof ANOMALY_KINDS)[number];

export interface Destination {
  readonly province: Province;
  readonly district: string;
  readonly ward: string;
}

export interface Account {
  readonly index: number;
  readonly alias: string;
  readonly apiKey: string;
  readonly clientHubID: string;
  readonly hubProvince: Province;
}

/** Everything about one order, fixed at generation; what the carrier shows depends on the clock. */
export interface OrderPlan {
  readonly code: string;
  readonly account: Account;
  readonly index: number;
  readonly createdAt: number;
  readonly externalCode: string | null;
  readonly referenceCode: string | null;
  readonly service: ServiceType;
  readonly mailerTypeID: string;
  readonly quantity: number;
  readonly length: number;
  readonly width: number;
  readonly height: number;
  readonly realWeight: number;
  readonly codAmount: number;
  readonly destination: Destination;
  readonly receiverName: string;
  readonly mailman: string;
  readonly events: readonly StatusEvent[];
  readonly steps: readonly HandlingStep[];
  readonly imageCount: number;
  readonly anomaly: AnomalyKind | null;
  /** Sub-millisecond digits of each event's time as the callback's seven-digit fraction shows them. */
  readonly eventTimeTicks: readonly string[];
}

export interface LifecycleOptions {
  readonly cancelRate: number;
  readonly lostRate: number;
  readonly confiscatedRate: number;
  readonly failedAttemptRate: number;
  readonly maxAttempts: number;
  readonly anomalyRate: number;
  readonly noImageRate: number;
}

/** Delay reasons a postman reports, the common ones more often. */
const DELAY_WEIGHTS: readonly (readonly [string, number])[] = DELAY_REASONS.map((r) => [
  r.code,
  ['09', '10', '11', '12', '13'].includes(r.code) ? 8 : ['01', '04', '08', '35'].includes(r.code) ? 4 : 1,
]);

/** Provinces an order's parcels are sorted through on the way. */
const HUB_PROVINCES = PROVINCES.filter((p) => !p.farRegion);
const SERVICE_WEIGHTS: readonly (readonly [ServiceType, number])[] = [
  [SERVICE_TYPES[0]!, 7],
  [SERVICE_TYPES[1]!, 3],
];
const QUANTITY_WEIGHTS: readonly (readonly [number, number])[] = [
  [1, 8],
  [2, 2],
  [3, 1],
];

function noteOf(code: string): string {
  return DELAY_REASONS.find((r) => r.code === code)?.note ?? '';
}

/** Generates one order's whole life from its own random stream. */
export function planOrder(
  rng: SeededRandom,
  account: Account,
  index: number,
  code: string,
  createdAt: number,
  options: LifecycleOptions,
): OrderPlan {
  const destinationProvince = rng.pick(PROVINCES);
  const district = rng.pick(destinationProvince.districts);
  const destination: Destination = {
    province: destinationProvince,
    district: district.name,
    ward: rng.pick(district.wards),
  };
  const origin = account.hubProvince;
  const originOffice = rng.pick(origin.postOffices);
  const destinationOffice = rng.pick(destinationProvince.postOffices);
  const hubProvince = rng.pick(HUB_PROVINCES);
  const hubOffice = rng.pick(hubProvince.postOffices);

  const events: StatusEvent[] = [];
  const steps: HandlingStep[] = [];
  const status = (s: string, at: number, province: Province, office: PostOffice, delayCode: string | null = null) =>
    events.push({
      status: s,
      at,
      province,
      office,
      delayCode,
      delayNote: delayCode === null ? null : noteOf(delayCode),
    });
  const step = (statusID: string, at: number, province: Province, office: PostOffice, notes: string | null = null) =>
    steps.push({ statusID, at, province, office, notes });

  let t = createdAt;
  status(STATUS.RECEIVED, t, origin, originOffice);
  step(TRACKING_STEP.ENTERED, t, origin, originOffice);

  const fate = rng.fraction();
  if (fate < options.cancelRate) {
    status(STATUS.CANCELLED, t + rng.hours(1, 20), origin, originOffice);
  } else {
    t += rng.hours(2, 20);
    status(STATUS.PICKED_UP, t, origin, originOffice);
    step(TRACKING_STEP.PACKED, t + rng.hours(0.5, 2), origin, originOffice);
    t += rng.hours(3, 10);
    status(STATUS.IN_TRANSPORT, t, hubProvince, hubOffice);
    step(TRACKING_STEP.FORWARDED, t, hubProvince, hubOffice);
    if (fate < options.cancelRate + options.lostRate) {
      status(STATUS.LOST, t + rng.hours(48, 120), hubProvince, hubOffice);
    } else if (fate < options.cancelRate + options.lostRate + options.confiscatedRate) {
      status(STATUS.CONFISCATED, t + rng.hours(24, 72), hubProvince, hubOffice);
    } else {
      t += rng.hours(10, 40);
      step(TRACKING_STEP.ARRIVED, t, destinationProvince, destinationOffice);
      let delivered = false;
      for (let attempt = 1; attempt <= options.maxAttempts && !delivered; attempt++) {
        t += rng.hours(1, 8);
        status(STATUS.OUT_FOR_DELIVERY, t, destinationProvince, destinationOffice);
        step(TRACKING_STEP.HANDED_TO_POSTMAN, t, destinationProvince, destinationOffice);
        step(TRACKING_STEP.OUT_FOR_DELIVERY, t + rng.hours(0.1, 0.5), destinationProvince, destinationOffice);
        t += rng.hours(2, 8);
        if (rng.chance(options.failedAttemptRate)) {
          const delayCode = rng.pickWeighted(DELAY_WEIGHTS);
          status(STATUS.AWAITING_HANDLING, t, destinationProvince, destinationOffice, delayCode);
          // A sender's request to return ends the attempts at once.
          if (delayCode === '26') break;
          t += rng.hours(12, 30);
        } else {
          status(STATUS.DELIVERED, t, destinationProvince, destinationOffice);
          delivered = true;
        }
      }
      if (!delivered) {
        t += rng.hours(6, 24);
        status(STATUS.RETURNING, t, destinationProvince, destinationOffice);
        status(STATUS.RETURNED, t + rng.hours(24, 96), origin, originOffice);
      }
    }
  }

  const service = rng.pickWeighted(SERVICE_WEIGHTS);
  const mailerTypeID = rng.chance(0.15) ? 'TL' : 'HH';
  const small = mailerTypeID === 'TL';
  const length = small ? rng.int(20, 35) : rng.int(5, 60);
  const width = small ? rng.int(10, 25) : rng.int(5, 50);
  const height = small ? rng.int(1, 3) : rng.int(2, 40);
  const realWeight = small ? rng.int(1, 5) / 10 : rng.int(1, 300) / 10;
  const finalStatus = events[events.length - 1]!.status;
  const anomaly = rng.chance(options.anomalyRate) ? rng.pick(eligibleAnomalies(events, destinationProvince)) : null;

  return {
    code,
    account,
    index,
    createdAt,
    externalCode: rng.chance(0.8) ? `PO-${account.alias.toUpperCase()}-${index + 1}` : null,
    referenceCode: rng.chance(0.5) ? `REF${rng.hex(8).toUpperCase()}` : null,
    service,
    mailerTypeID,
    quantity: small ? 1 : rng.pickWeighted(QUANTITY_WEIGHTS),
    length,
    width,
    height,
    realWeight,
    codAmount: rng.chance(0.4) ? 0 : rng.int(10, 2000) * 1000,
    destination,
    receiverName: rng.pick(PERSON_NAMES),
    mailman: rng.pick(PERSON_NAMES),
    events,
    steps: steps.sort((a, b) => a.at - b.at),
    imageCount: finalStatus === STATUS.DELIVERED && !rng.chance(options.noImageRate) ? rng.int(1, 3) : 0,
    anomaly,
    eventTimeTicks: events.map(() => String(rng.int(0, 9999)).padStart(4, '0')),
  };
}

/** The billing anomalies that make sense for an order with this life. */
function eligibleAnomalies(events: readonly StatusEvent[], destination: Province): AnomalyKind[] {
  const has = (s: string) => events.some((e) => e.status === s);
  if (has(STATUS.CANCELLED)) return ['charge_on_cancelled'];
  const kinds: AnomalyKind[] = [
    'total_mismatch',
    'wrong_cal_weight',
    'wrong_chargeable_weight',
    'wrong_fuel',
    'wrong_vat',
    'overbilled_vs_quote',
  ];
  if (destination.farRegion) kinds.push('far_region_fee_without_line');
  if (!has(STATUS.RETURNING)) kinds.push('return_charge_not_returned');
  if (has(STATUS.DELIVERED)) kinds.push('total_changed_after_delivery');
  return kinds;
}
