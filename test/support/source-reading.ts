import { type OrderCodeSource, SourceError, type SourceItem } from '../../src/sources/order-code-source.js';

/** Every item of a source, in order. */
export async function readItems(source: OrderCodeSource): Promise<SourceItem[]> {
  const items: SourceItem[] = [];
  for await (const item of source.items()) items.push(item);
  return items;
}

/** The SourceError reading a source throws; fails when it throws another error or none. */
export async function sourceErrorOf(source: OrderCodeSource): Promise<SourceError> {
  try {
    await readItems(source);
  } catch (error) {
    if (error instanceof SourceError) return error;
    throw error;
  }
  throw new Error(`expected a SourceError, ${source.description} was read to the end`);
}
