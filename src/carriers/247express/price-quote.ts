import { z } from 'zod';
import { carrierDateTime, listOrNull, measure, money, undocumented } from '../field-types.js';

/** Body of `POST {base_url}/Api/Customer/GetPriceForCustomerAPI`. Which fields are required is not documented. */
export const PriceRequestSchema = z.looseObject({
  ToProvinceName: z.string(),
  ToDistrictName: z.string(),
  ToWardName: z.string(),
  Length: measure,
  Width: measure,
  Height: measure,
  RealWeight: measure,
  ClientHubID: z.string(),
  ServiceTypeID: z.string(),
});

/** Element of `ExtraServices`: one charge line of the quote. */
export const ExtraServiceSchema = z.looseObject({
  ExtraServiceID: z.number().int(),
  ServiceName: z.string(),
  OrderCode: z.string().nullable(),
  ServiceID: z.string(),
  Type: z.number().int(),
  Cost: money,
  InformFee: money,
  IsDefaultService: z.boolean(),
  IsOneDeliveryService: z.boolean(),
  IsApplyAllServiceType: z.boolean().nullable(),
  FromDate: carrierDateTime.nullable(),
  ToDate: carrierDateTime.nullable(),
  IsActive: z.boolean().nullable(),
  Detail: undocumented,
});

/** Answer of the price calculation. On an error, IsError is true and the numbers are not relied on. */
export const PriceResultSchema = z.looseObject({
  ExtraServices: listOrNull(ExtraServiceSchema),
  MainPrice: money,
  TotalServiceCost: money,
  CouponMoneyRemainder: money,
  CalWeight: measure,
  Weight: measure,
  PriceMatrixID: z.string().nullable(),
  IsError: z.boolean(),
  Errors: listOrNull(z.unknown()),
  ErrorMessage: z.string().nullable(),
  DepositChangeAmount: money,
});

/** A failed price answer need not carry the numbers; only the error fields are read. */
export const PriceFailureSchema = z.looseObject({
  IsError: z.boolean().optional(),
  Errors: listOrNull(z.unknown()).optional(),
  ErrorMessage: z.string().nullable().optional(),
});

export type PriceRequest = z.output<typeof PriceRequestSchema>;
export type ExtraService = z.output<typeof ExtraServiceSchema>;
export type PriceResult = z.output<typeof PriceResultSchema>;
export type PriceRequestWire = z.input<typeof PriceRequestSchema>;
export type PriceResultWire = z.input<typeof PriceResultSchema>;
export type ExtraServiceWire = z.input<typeof ExtraServiceSchema>;
