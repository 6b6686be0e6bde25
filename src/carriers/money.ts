import { Big } from 'big.js';

/** Decimal text without exponent notation, whatever the magnitude. */
function plainDecimal(value: Big): Money {
  return value.toFixed() as Money;
}

/**
 * A money amount as an exact decimal string (`1563936`, `0.1`). The carrier sends JSON numbers; the
 * contract turns each into the shortest decimal text that reads back as the same number, and every
 * sum or share is done in decimal arithmetic, so no float drift enters a total.
 */
export type Money = string & { readonly __brand: 'Money' };

export function moneyFromNumber(value: number): Money {
  // Whole amounts (all the carrier's VND amounts) print exactly without decimal arithmetic.
  if (Number.isSafeInteger(value)) return String(value) as Money;
  return plainDecimal(new Big(value));
}

export function moneyFromText(text: string): Money {
  return plainDecimal(new Big(text));
}

export function sumMoney(amounts: readonly (Money | string | number)[]): Money {
  let total = new Big(0);
  for (const amount of amounts) total = total.plus(amount);
  return plainDecimal(total);
}

/** `share` of `amount` (e.g. 0.2 for a 20% fuel fee), rounded half-up to `decimals` places. */
export function shareOfMoney(amount: Money | string | number, share: string | number, decimals = 0): Money {
  return plainDecimal(new Big(amount).times(share).round(decimals, Big.roundHalfUp));
}

export function subtractMoney(a: Money | string | number, b: Money | string | number): Money {
  return plainDecimal(new Big(a).minus(b));
}

export function moneyEquals(a: Money | string | number, b: Money | string | number): boolean {
  return new Big(a).eq(b);
}

export function moneyToNumber(amount: Money | string): number {
  return Number(amount);
}

/**
 * Whole digits with their thousands separated by commas (`4,192,514`). Written out rather than taken
 * from `toLocaleString`, whose first call loads the locale data: help text built at every start would
 * pay for it.
 */
export function groupThousands(whole: number | string): string {
  return String(whole).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * An amount of dong as finance reads it: thousands separated by commas, whole dong without decimals
 * (`4,192,514`), a fraction of a dong only when there is one (`0.5`).
 */
export function formatVnd(amount: Money | string | number): string {
  const exact = new Big(amount).toFixed();
  const [whole = '0', fraction] = exact.replace('-', '').split('.');
  return `${exact.startsWith('-') ? '-' : ''}${groupThousands(whole)}${fraction === undefined ? '' : `.${fraction}`}`;
}
