/** GHN's order codes are letters and digits (`L6A8Q9`, `Z82T1`); its pages give no length, so a generous bound. */
const GHN_ORDER_CODE = /^[A-Za-z0-9]{1,40}$/;

/** The product's code for a row whose code GHN never gives. */
export const GHN_ORDER_CODE_FORMAT = 'GHN_ORDER_CODE_FORMAT';

/** GHN_ORDER_CODE_FORMAT for a code that is not 1 to 40 letters and digits, else undefined. */
export function checkGhnOrderCode(code: string): typeof GHN_ORDER_CODE_FORMAT | undefined {
  return GHN_ORDER_CODE.test(code) ? undefined : GHN_ORDER_CODE_FORMAT;
}
