import { z } from 'zod';
import { listOrNull } from '../field-types.js';

/** Body of `POST {base_url}/Api/Customer/GetOrderImages`. */
export const ImagesRequestSchema = z.looseObject({
  OrderCode: z.string(),
});

/** One image link of an order; `No` counts from 1. */
export const ImageItemSchema = z.looseObject({
  No: z.number().int(),
  OrderCode: z.string(),
  ImageURL: z.string(),
});

export const ImagesResultSchema = z.looseObject({
  Items: listOrNull(ImageItemSchema),
  Errors: listOrNull(z.unknown()),
  ErrorMessage: z.string().nullable(),
});

export type ImagesRequest = z.output<typeof ImagesRequestSchema>;
export type ImageItem = z.output<typeof ImageItemSchema>;
export type ImagesResult = z.output<typeof ImagesResultSchema>;
export type ImagesResultWire = z.input<typeof ImagesResultSchema>;
