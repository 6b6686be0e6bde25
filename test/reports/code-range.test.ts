import { describe, expect, it } from 'vitest';
import { EXPRESS_247 } from '../../src/carriers/247express/carrier.js';
import { codeRangeCondition, codeRangeOf } from '../../src/reports/report-sql.js';

describe("a report's range of order codes", () => {
  it('is the codes of the carriers that hand them out rising, and of a partner', () => {
    expect(EXPRESS_247.risingOrderCodes).toBe(true);
    const codes = codeRangeOf([
      { carrier: '247express', first: 'EX000000120', last: 'EX000000480' },
      { carrier: null, first: 'EX000000100', last: 'EX000000300' },
    ]);
    expect(codes).toEqual({ first: 'EX000000100', last: 'EX000000480' });
    expect(codeRangeCondition({ codes })).toBe("order_code BETWEEN 'EX000000100' AND 'EX000000480'");
  });

  it('is none when a carrier among the rows does not hand out rising codes, or when there are no codes', () => {
    expect(
      codeRangeOf([
        { carrier: '247express', first: 'EX000000120', last: 'EX000000480' },
        { carrier: 'ghn', first: 'GHN5K3DA', last: 'GHNZZ19Q' },
      ]),
    ).toBeUndefined();
    expect(codeRangeOf([{ carrier: '247express', first: null, last: null }])).toBeUndefined();
    expect(codeRangeCondition({ codes: undefined })).toBe('true');
  });
});
