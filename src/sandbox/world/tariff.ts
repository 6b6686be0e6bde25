import { Big } from 'big.js';
import { PRICE_SERVICE, PUBLISHED_PRICING, shareOfMoney, sumMoney } from '../../carriers/247express/contract.js';
import type { Province } from './geography.js';

export interface ServiceType {
  readonly id: string;
  readonly name: string;
  /** Price of the first half kilogram, per zone, in VND. */
  readonly firstHalfKg: Readonly<Record<Zone, number>>;
  /** Price of each further half kilogram, per zone, in VND. */
  readonly extraHalfKg: Readonly<Record<Zone, number>>;
}

export type Zone = 'local' | 'national' | 'far';

export const SERVICE_TYPES: readonly ServiceType[] = [
  {
    id: 'DE',
    name: 'Chuyển phát nhanh',
    firstHalfKg: { local: 16_500, national: 32_000, far: 38_000 },
    extraHalfKg: { local: 2_500, national: 5_000, far: 6_000 },
  },
  {
    id: 'TK',
    name: 'Chuyển phát tiết kiệm',
    firstHalfKg: { local: 13_200, national: 25_600, far: 30_400 },
    extraHalfKg: { local: 2_000, national: 4_000, far: 4_800 },
  },
];

export function findServiceType(id: string): ServiceType | undefined {
  return SERVICE_TYPES.find((s) => s.id === id);
}

/** Shares the sandbox prices with; the published relations (docs/carriers/247express.md) plus the two it adds. */
export const SANDBOX_PRICING = {
  ...PUBLISHED_PRICING,
  farRegionShare: '0.2',
  returnShare: '0.5',
} as const;

export interface ParcelMeasures {
  readonly length: number;
  readonly width: number;
  readonly height: number;
  readonly realWeight: number;
}

export interface ChargeLine {
  readonly serviceID: string;
  readonly serviceName: string;
  readonly cost: number;
}

/** The charges of one parcel, every amount a whole number of VND. */
export interface Charges {
  readonly calWeight: number;
  readonly weight: number;
  readonly price: number;
  readonly priceFR: number;
  readonly farRegionFeeAmount: number;
  readonly fuelFeeAmount: number;
  readonly vatAmount: number;
  readonly totalServiceCost: number;
  readonly lines: readonly ChargeLine[];
}

export const LINE_NAMES = {
  [PRICE_SERVICE.FAR_REGION]: 'Phụ phí vùng sâu vùng xa',
  [PRICE_SERVICE.FUEL]: 'Phụ phí xăng dầu',
  [PRICE_SERVICE.VAT]: 'Thuế VAT',
  RETURN: 'Cước chuyển hoàn',
} as const;

/** serviceID of the return charge line; not among the documented values, which the contract allows. */
export const RETURN_SERVICE_ID = 'CH';

function roundTo(value: number, step: number): number {
  return Math.round(value / step) * step;
}

/**
 * Weight converted from dimensions with the published divisor, rounded half-up to two decimals in
 * exact decimal: in binary floating point an exact half such as 870 / 6000 = 0.145 rounds down.
 */
export function volumetricWeight(m: ParcelMeasures): number {
  const divisor = PUBLISHED_PRICING.volumetricDivisor;
  const product = m.length * m.width * m.height;
  if (
    Number.isInteger(m.length) &&
    Number.isInteger(m.width) &&
    Number.isInteger(m.height) &&
    product >= 0 &&
    Number.isSafeInteger(product * 200 + divisor)
  ) {
    // Whole centimetres, as every generated order has: the same rounding in integers, which are
    // exact below 2^53, and the division by 100 gives the double nearest the decimal, as Number() of
    // its text does. Decimal arithmetic would be a noticeable share of a lookup's time.
    return Math.floor((product * 200 + divisor) / (2 * divisor)) / 100;
  }
  const volume = new Big(m.length).times(m.width).times(m.height);
  return Number(volume.div(PUBLISHED_PRICING.volumetricDivisor).round(2, Big.roundHalfUp));
}

export function zoneOf(origin: Province, destination: Province): Zone {
  if (destination.farRegion) return 'far';
  return origin.id === destination.id ? 'local' : 'national';
}

/** The main charge for a chargeable weight: first half kilogram, then each started half kilogram. */
export function mainCharge(service: ServiceType, zone: Zone, weight: number): number {
  const extraHalves = Math.max(0, Math.ceil((weight - 0.5) * 2 - 1e-9));
  return roundTo(service.firstHalfKg[zone] + extraHalves * service.extraHalfKg[zone], 100);
}

type ChargesFromMain = Omit<Charges, 'calWeight' | 'weight'>;

/**
 * Charges by their inputs: orders share few main charges, and the decimal arithmetic of each costs
 * more than the rest of a lookup's charges.
 */
const chargesByInputs = new Map<string, ChargesFromMain>();
const CHARGES_BY_INPUTS_LIMIT = 10_000;

/**
 * The charges from a main charge: the far-region fee (20% of main, remote provinces), fuel (20% of
 * main), an optional return charge (50% of main), VAT (10% of main plus fuel and fees); the total is
 * the sum of the lines. Main is a multiple of 100, so every share is a whole number.
 */
export function chargesFromMain(
  service: ServiceType,
  main: number,
  options: { farRegion: boolean; returned: boolean; fuelShare?: string; vatShare?: string },
): ChargesFromMain {
  const key = `${service.id} ${main} ${options.farRegion} ${options.returned} ${options.fuelShare ?? ''} ${options.vatShare ?? ''}`;
  let charges = chargesByInputs.get(key);
  if (charges === undefined) {
    charges = computeChargesFromMain(service, main, options);
    if (chargesByInputs.size >= CHARGES_BY_INPUTS_LIMIT) chargesByInputs.clear();
    chargesByInputs.set(key, charges);
  }
  return charges;
}

function computeChargesFromMain(
  service: ServiceType,
  main: number,
  options: { farRegion: boolean; returned: boolean; fuelShare?: string; vatShare?: string },
): ChargesFromMain {
  const farRegionFeeAmount = options.farRegion
    ? roundTo(Number(shareOfMoney(main, SANDBOX_PRICING.farRegionShare)), 100)
    : 0;
  const priceFR = options.returned ? roundTo(Number(shareOfMoney(main, SANDBOX_PRICING.returnShare)), 100) : 0;
  const fuelFeeAmount = Number(shareOfMoney(main, options.fuelShare ?? SANDBOX_PRICING.fuelShare));
  const vatBase = sumMoney([main, farRegionFeeAmount, fuelFeeAmount, priceFR]);
  const vatAmount = Number(shareOfMoney(vatBase, options.vatShare ?? SANDBOX_PRICING.vatShare));
  const lines: ChargeLine[] = [
    { serviceID: service.id === 'DE' ? PRICE_SERVICE.MAIN : service.id, serviceName: service.name, cost: main },
  ];
  if (farRegionFeeAmount > 0)
    lines.push({ serviceID: PRICE_SERVICE.FAR_REGION, serviceName: LINE_NAMES.VSVX, cost: farRegionFeeAmount });
  if (priceFR > 0) lines.push({ serviceID: RETURN_SERVICE_ID, serviceName: LINE_NAMES.RETURN, cost: priceFR });
  lines.push({ serviceID: PRICE_SERVICE.FUEL, serviceName: LINE_NAMES.Fuel, cost: fuelFeeAmount });
  lines.push({ serviceID: PRICE_SERVICE.VAT, serviceName: LINE_NAMES.VAT, cost: vatAmount });
  const totalServiceCost = Number(sumMoney(lines.map((l) => l.cost)));
  return { price: main, priceFR, farRegionFeeAmount, fuelFeeAmount, vatAmount, totalServiceCost, lines };
}

/** The clean charges of a parcel sent from `origin` to `destination`. */
export function priceParcel(
  service: ServiceType,
  origin: Province,
  destination: Province,
  measures: ParcelMeasures,
  returned = false,
): Charges {
  const calWeight = volumetricWeight(measures);
  const weight = Math.max(measures.realWeight, calWeight);
  const main = mainCharge(service, zoneOf(origin, destination), weight);
  return { calWeight, weight, ...chargesFromMain(service, main, { farRegion: destination.farRegion, returned }) };
}
