import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { readVndAmount } from '../../src/sources/vnd-amount.js';

/** Digits grouped by thousands with `separator`: 1250000 as `1.250.000`. */
function grouped(amount: number, separator: string): string {
  return String(amount).replace(/\B(?=(\d{3})+(?!\d))/g, separator);
}

/** Each way a statement may spell a whole amount of VND. */
const STYLES: readonly ((amount: number) => string)[] = [
  (n) => String(n),
  (n) => grouped(n, '.'),
  (n) => grouped(n, ','),
  (n) => grouped(n, ' '),
  (n) => `${grouped(n, ',')} đ`,
  (n) => `${grouped(n, '.')}₫`,
  (n) => `${grouped(n, '.')} VND`,
  (n) => `${grouped(n, '.')} VNĐ`,
  (n) => `₫${grouped(n, ',')}`,
  (n) => `${grouped(n, ',')}.00`,
  (n) => `${grouped(n, '.')},00`,
  (n) => `\u00a0${grouped(n, '\u00a0')}\u00a0đ `,
];

describe('a whole amount of VND', () => {
  test.prop([fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.nat({ max: STYLES.length - 1 }), fc.boolean()], {
    numRuns: 500,
  })('written in any accepted style reads back as itself', (amount, style, negative) => {
    const spelled = STYLES[style]!(amount);
    const signed = negative ? `-${spelled.trim()}` : spelled;
    expect(readVndAmount(signed)).toEqual({ ok: true, amount: negative && amount !== 0 ? -amount : amount });
  });

  test.prop([fc.integer({ min: 1, max: 10_000_000_000 })])('in accounting brackets is negative', (amount) => {
    expect(readVndAmount(`(${grouped(amount, '.')} đ)`)).toEqual({ ok: true, amount: -amount });
  });
});

describe('statement amounts', () => {
  it('reads the spellings statements use', () => {
    expect(readVndAmount('1.250.000')).toEqual({ ok: true, amount: 1_250_000 });
    expect(readVndAmount('1,250,000 đ')).toEqual({ ok: true, amount: 1_250_000 });
    expect(readVndAmount('1.250.000₫')).toEqual({ ok: true, amount: 1_250_000 });
    expect(readVndAmount('1.250.000 VND')).toEqual({ ok: true, amount: 1_250_000 });
    // Vietnamese grouping: a point before three digits groups thousands.
    expect(readVndAmount('1.250')).toEqual({ ok: true, amount: 1_250 });
    expect(readVndAmount('−30.000')).toEqual({ ok: true, amount: -30_000 });
  });

  it('is blank for an empty cell, so the caller decides what it means', () => {
    expect(readVndAmount('')).toBeUndefined();
    expect(readVndAmount('   ')).toBeUndefined();
  });

  it('refuses text, fractions of a dong and separators that do not group', () => {
    for (const text of ['abc', 'đ', 'một triệu', '1.250.000.00', '1,25,000', '12-500', '1e6', '--5', '1.250.000 USD'])
      expect(readVndAmount(text), text).toEqual({ ok: false, reason: 'not an amount of VND' });
    for (const text of ['1.25', '1250,5', '1.250.000,50', '1,250,000.5'])
      expect(readVndAmount(text), text).toEqual({ ok: false, reason: 'not whole VND' });
    expect(readVndAmount('99999999999999999999')).toEqual({ ok: false, reason: 'too large' });
  });
});
