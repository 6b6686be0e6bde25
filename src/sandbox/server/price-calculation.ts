import {
  describeIssues,
  PRICE_SERVICE,
  PriceRequestSchema,
  type PriceResultWire,
} from '../../carriers/247express/contract.js';
import { findProvince } from '../world/geography.js';
import type { Account } from '../world/order-plan.js';
import type { SandboxWorld } from '../world/sandbox-world.js';
import { findServiceType, priceParcel } from '../world/tariff.js';

/** Type of an ExtraServices item: 1 for the main service, 3 for fees (fuel, VAT, far region). */
const MAIN_TYPE = 1;
const FEE_TYPE = 3;

const EXTRA_SERVICE_IDS: Record<string, number> = { DE: 1, TK: 2, VSVX: 11, Fuel: 21, VAT: 31 };

export function priceFailure(errors: { Field: string; Message: string }[]): PriceResultWire {
  return {
    ExtraServices: [],
    MainPrice: 0,
    TotalServiceCost: 0,
    CouponMoneyRemainder: 0,
    CalWeight: 0,
    Weight: 0,
    PriceMatrixID: null,
    IsError: true,
    Errors: errors,
    ErrorMessage: errors.map((e) => e.Message).join('; '),
    DepositChangeAmount: 0,
  };
}

/**
 * Quotes a parcel with the same tariff the sandbox bills its orders with, so a quote for an order's
 * own measures and destination equals its clean charges. MainPrice is 0, as in the published example.
 */
export function answerPriceCalculation(world: SandboxWorld, account: Account, body: unknown): PriceResultWire {
  const checked = PriceRequestSchema.safeParse(body);
  if (!checked.success) {
    return priceFailure([
      {
        Field: String(checked.error.issues[0]?.path[0] ?? ''),
        Message: describeIssues(checked.error.issues, 'price request'),
      },
    ]);
  }
  const request = checked.data;
  const errors: { Field: string; Message: string }[] = [];
  const destination = findProvince(request.ToProvinceName);
  if (!destination) errors.push({ Field: 'ToProvinceName', Message: `Province not found: ${request.ToProvinceName}` });
  const service = findServiceType(request.ServiceTypeID);
  if (!service) errors.push({ Field: 'ServiceTypeID', Message: `Service type not found: ${request.ServiceTypeID}` });
  const hub = world.findAccountByHub(request.ClientHubID);
  if (!hub || hub !== account)
    errors.push({ Field: 'ClientHubID', Message: `Client hub not found for this account: ${request.ClientHubID}` });
  if (!(request.RealWeight > 0)) errors.push({ Field: 'RealWeight', Message: 'RealWeight must be greater than 0' });
  for (const field of ['Length', 'Width', 'Height'] as const) {
    if (!(request[field] >= 0)) errors.push({ Field: field, Message: `${field} must not be negative` });
  }
  if (errors.length > 0 || !destination || !service || !hub) return priceFailure(errors);

  const charges = priceParcel(service, hub.hubProvince, destination, {
    length: request.Length,
    width: request.Width,
    height: request.Height,
    realWeight: request.RealWeight,
  });
  return {
    ExtraServices: charges.lines.map((line) => ({
      ExtraServiceID: EXTRA_SERVICE_IDS[line.serviceID] ?? 0,
      ServiceName: line.serviceName,
      OrderCode: null,
      ServiceID: line.serviceID,
      Type: line.serviceID === PRICE_SERVICE.MAIN || line.serviceID === service.id ? MAIN_TYPE : FEE_TYPE,
      Cost: line.cost,
      InformFee: 0,
      IsDefaultService: true,
      IsOneDeliveryService: false,
      IsApplyAllServiceType: null,
      FromDate: null,
      ToDate: null,
      IsActive: true,
      Detail: null,
    })),
    MainPrice: 0,
    TotalServiceCost: charges.totalServiceCost,
    CouponMoneyRemainder: 0,
    CalWeight: charges.calWeight,
    Weight: charges.weight,
    PriceMatrixID: `PM-${service.id}-${destination.farRegion ? 'FAR' : destination.id === hub.hubProvince.id ? 'LOCAL' : 'NATIONAL'}`,
    IsError: false,
    Errors: [],
    ErrorMessage: '',
    DepositChangeAmount: 0,
  };
}
