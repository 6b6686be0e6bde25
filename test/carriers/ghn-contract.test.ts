/**
 * GHN's contract reads GHN's own published samples (test/carriers/ghn-samples/, see
 * docs/carriers/ghn.md, "Published samples"): an answer of its staging host for a fresh order, its
 * documented answer of the lookup by the shop's code, its documented webhook and its error texts.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { neutralStatusOf } from '../../src/carriers/carrier-definition.js';
import {
  checkGhnDetailAnswer,
  checkGhnFeesAnswer,
  classifyGhnError,
  findGhnFailureReason,
  findGhnStatus,
  GHN,
  GHN_VOLUMETRIC_DIVISOR,
  type GhnOrderDetail,
  type GhnResult,
  GhnWebhookSchema,
  ghnWebhookEventId,
} from '../../src/carriers/ghn/contract.js';

const sample = async (name: string): Promise<unknown> =>
  JSON.parse(await readFile(new URL(`./ghn-samples/${name}`, import.meta.url), 'utf8'));

function orderOf(result: ReturnType<typeof checkGhnDetailAnswer>): GhnOrderDetail {
  if (!result.ok) throw new Error(result.message);
  const value: GhnResult<GhnOrderDetail> = result.value;
  if (value.kind !== 'ok') throw new Error(`an error answer: ${value.error.message}`);
  return value.value;
}

describe("GHN's order detail", () => {
  it('reads a fresh order as the staging host answers it: no log, no COD dates, unknown fields kept', async () => {
    const order = orderOf(checkGhnDetailAnswer(await sample('detail-ready-to-pick.json')));
    expect(order.order_code).toBe('L6A8Q9');
    expect(order.status).toBe('ready_to_pick');
    expect(neutralStatusOf(GHN, order.status)).toBe('pending');
    expect(order.log).toEqual([]);
    expect(order.cod_amount).toBe('50000');
    expect([order.is_cod_collected, order.is_cod_transferred]).toEqual([false, false]);
    expect(order.cod_collect_date).toBeUndefined();
    expect(order.cod_failed_collect_date).toBeNull();
    expect(order.order_date).toBe('2024-08-05T06:57:47.686000Z');
    expect((order.length * order.width * order.height) / GHN_VOLUMETRIC_DIVISOR).toBe(order.converted_weight);
    expect((order as Record<string, unknown>).tag).toEqual(['bulky', 'truck']);
  });

  it("reads the documented lookup by the shop's code: a list of one order, flags and unset dates as text", async () => {
    const order = orderOf(checkGhnDetailAnswer(await sample('detail-by-client-code-returning.json')));
    expect([order.order_code, order.client_order_code, order.status]).toEqual(['Z82T1', 'Tin1234567', 'return']);
    expect(neutralStatusOf(GHN, order.status)).toBe('returning');
    expect([order.is_cod_collected, order.cod_collect_date, order.finish_date]).toEqual([false, null, null]);
    expect(order.log.map((entry) => entry.status)).toEqual([
      'picking',
      'picked',
      'delivering',
      'delivery_fail',
      'waiting_to_return',
      'return',
    ]);
    for (const entry of order.log) expect(findGhnStatus(entry.status), entry.status).toBeDefined();
    expect(order.log[4]!.updated_date).toBe('2021-11-11T03:07:53.640000Z');
    expect(order.log[0]!.payment_type_id).toBe(2);
  });

  it('names a wrong field of an answer', async () => {
    const answer = (await sample('detail-ready-to-pick.json')) as { data: Record<string, unknown> };
    const result = checkGhnDetailAnswer({ ...answer, data: { ...answer.data, cod_amount: '12.5' } });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(/^GHN order detail rejected: .*cod_amount/);
  });

  it("classes GHN's published error answers", async () => {
    const answers = (await sample('error-answers.json')) as unknown[];
    const kinds = answers.map((answer) => {
      const result = checkGhnDetailAnswer(answer);
      if (!result.ok || result.value.kind !== 'error') throw new Error('not an error answer');
      return classifyGhnError(result.value.error);
    });
    expect(kinds.map((kind) => kind.code)).toEqual([
      'GHN_TOKEN_REFUSED',
      'GHN_ORDER_NOT_FOUND',
      'GHN_ORDER_NOT_FOUND',
      'GHN_SHOP_REFUSED',
      'GHN_REQUEST_REFUSED',
    ]);
    expect(kinds.map((kind) => [kind.settles, kind.stopsKey])).toEqual([
      [false, true],
      [true, false],
      [true, false],
      [false, true],
      [false, false],
    ]);
    expect(classifyGhnError({ code: 400, message: 'something new', codeMessage: null }).code).toBe('GHN_OTHER_ERROR');
    expect(classifyGhnError({ code: 429, message: '', codeMessage: null }).transient).toBe(true);
  });
});

describe("GHN's order codes", () => {
  it('refuses before any lookup a code GHN never gives: not letters and digits, or past 40', () => {
    for (const code of ['L6A8Q9', 'Z82T1', 'GA8Q9KL1']) expect(GHN.checkOrderCode(code)).toBeUndefined();
    for (const code of ['', 'L6A8-Q9', 'Đơn1', 'A'.repeat(41)])
      expect(GHN.checkOrderCode(code)).toBe('GHN_ORDER_CODE_FORMAT');
  });
});

describe("GHN's order fees", () => {
  it('reads the documented sample: each fee, and the payments that add to them', async () => {
    const result = checkGhnFeesAnswer(await sample('fees-returned.json'));
    if (!result.ok || result.value.kind !== 'ok') throw new Error('the sample is not read as fees');
    const fees = result.value.value;
    expect(fees.order_code).toBe('S5ENLKKHD');
    expect(fees.detail).toMatchObject({ main_service: '29700', insurance: '11000', return: '22000', coupon: '0' });
    expect(fees.payment.map((payment) => payment.value)).toEqual(['40700', '22000']);
    // GHN's unset date reads as none.
    expect(fees.payment[0]!.paid_date).toBeNull();
  });

  it('reads the documented answer for an order without fees as an error that settles nothing', () => {
    const result = checkGhnFeesAnswer({ code: 404, message: 'Không tìm thấy thông tin đơn hàng', data: null });
    if (!result.ok || result.value.kind !== 'error') throw new Error('not an error answer');
    expect(classifyGhnError(result.value.error).code).toBe('GHN_ORDER_NOT_FOUND');
  });
});

describe("GHN's webhook", () => {
  it('reads the documented sample: its type in lower case, TotalFee the sum of the fees where Fee.Total is 0', async () => {
    const webhook = GhnWebhookSchema.parse(await sample('webhook-create.json'));
    expect([webhook.OrderCode, webhook.Type, webhook.Status, webhook.ShopID]).toEqual([
      'Z82BS',
      'create',
      'ready_to_pick',
      81558,
    ]);
    expect(webhook.Time).toBe('2021-11-11T03:52:50.158000Z');
    expect(webhook.Fee?.Total).toBe('0');
    expect(Number(webhook.Fee!.Insurance) + Number(webhook.Fee!.MainService)).toBe(Number(webhook.TotalFee));
    expect(webhook.CODTransferDate).toBeNull();
    expect(ghnWebhookEventId(webhook)).toBe('Z82BS|create|2021-11-11T03:52:50.158000Z');
    expect(
      GhnWebhookSchema.parse({ ...((await sample('webhook-create.json')) as object), Type: 'Switch_status' }).Type,
    ).toBe('switch_status');
  });

  it('finds failure reasons with or without the GHN- prefix', () => {
    expect(findGhnFailureReason('DFC1A4')).toMatchObject({ code: 'GHN-DFC1A4', leg: 'delivery' });
    expect(findGhnFailureReason('GHN-RFE0A1')?.leg).toBe('return');
    expect(findGhnFailureReason('NOPE')).toBeUndefined();
  });
});
