/**
 * Amounts of VND as statements spell them: `1.250.000` and `1 250 000` (Vietnamese grouping),
 * `1,250,000` (English grouping), `1250000`, with or without a currency sign (`đ`, `₫`, `VND`, `VNĐ`)
 * before or after, a sign (`-`, `−`) or accounting brackets for a negative amount, and a fraction of
 * zeros (`1,250,000.00`, `1.250.000,00`). Every amount is whole VND: a fraction that is not zero is refused.
 */

/** Currency signs and words, at either end, in any case. */
const CURRENCY = /^(?:vnđ|vnd|đ|₫)\s*|\s*(?:vnđ|vnd|đ|₫)$/iu;
/** Blanks inside an amount: spaces, no-break and narrow no-break spaces, thin spaces. */
const BLANKS = /[\s\u00a0\u2007\u2009\u202f]/gu;
/** Digits grouped by thousands with one separator throughout, then an optional fraction after the other one. */
const GROUPED = /^(\d{1,3}(?:([.,])\d{3})+)(?:([.,])(\d+))?$/;
/** Digits without grouping, then an optional fraction. */
const PLAIN = /^(\d+)(?:([.,])(\d+))?$/;

/** An amount read, or why the text is none. */
export type VndAmountReading =
  | { readonly ok: true; readonly amount: number }
  | { readonly ok: false; readonly reason: 'not an amount of VND' | 'not whole VND' | 'too large' };

function stripCurrency(text: string): string {
  let stripped = text.trim();
  for (let previous = ''; previous !== stripped; ) {
    previous = stripped;
    stripped = stripped.replace(CURRENCY, '').trim();
  }
  return stripped;
}

/** The sign and the unsigned text: `-1.000`, `−1.000`, `(1.000)` and `- 1.000 đ` are negative. */
function signed(text: string): { negative: boolean; digits: string } {
  const bracketed = /^\((.*)\)$/u.exec(text);
  if (bracketed !== null) return { negative: true, digits: stripCurrency(bracketed[1]!) };
  const minus = /^[-−](.*)$/u.exec(text);
  if (minus !== null) return { negative: true, digits: stripCurrency(minus[1]!) };
  return { negative: false, digits: text };
}

/**
 * Reads `text` as whole VND. Blank text is undefined (the caller decides what an empty cell means);
 * `1.250` is one thousand two hundred and fifty, as a Vietnamese statement writes it; `1.25` is not whole.
 */
export function readVndAmount(text: string): VndAmountReading | undefined {
  const { negative, digits: spelled } = signed(stripCurrency(text));
  const digits = spelled.replace(BLANKS, '');
  if (digits === '') return text.trim() === '' ? undefined : { ok: false, reason: 'not an amount of VND' };
  const grouped = GROUPED.exec(digits);
  let whole: string;
  let fraction: string | undefined;
  if (grouped !== null && grouped[3] !== grouped[2]) {
    whole = grouped[1]!.replace(/[.,]/g, '');
    fraction = grouped[4];
  } else {
    const plain = PLAIN.exec(digits);
    if (plain === null) return { ok: false, reason: 'not an amount of VND' };
    whole = plain[1]!;
    fraction = plain[3];
  }
  if (fraction !== undefined && /[^0]/.test(fraction)) return { ok: false, reason: 'not whole VND' };
  const amount = Number(whole);
  if (!Number.isSafeInteger(amount)) return { ok: false, reason: 'too large' };
  return { ok: true, amount: negative && amount !== 0 ? -amount : amount };
}
