import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Answer, type HangingRequests, respond } from '../../server/faulty-answer.js';
import { BodyTooLargeError, readBody, sendJson } from '../../server/http-exchange.js';
import type { Account } from '../../world/order-plan.js';
import type { SandboxWorld } from '../../world/sandbox-world.js';
import type { SandboxCarrierContext } from '../sandbox-carrier.js';
import { ghnOrderDetail, ghnOrderFees, ghnShopId } from './ghn-orders.js';

/** Where the sandbox serves GHN's API: its base address is the sandbox's URL and this path. */
export const GHN_SANDBOX_BASE_PATH = '/ghn/shiip/public-api';

const DETAIL = `${GHN_SANDBOX_BASE_PATH}/v2/shipping-order/detail`;
const DETAIL_BY_CLIENT_CODE = `${GHN_SANDBOX_BASE_PATH}/v2/shipping-order/detail-by-client-code`;
const FEES = `${GHN_SANDBOX_BASE_PATH}/v2/shipping-order/soc`;

/** An answer in GHN's envelope; GHN sends its errors with HTTP 400 and the inner code in the text. */
function envelope(status: number, body: object, orderCode?: string): Answer {
  return { status, json: JSON.stringify(body), ...(orderCode === undefined ? {} : { orderCode }) };
}

const success = (data: unknown, orderCode: string) => envelope(200, { code: 200, message: 'Success', data }, orderCode);

/** GHN's published error texts, by what went wrong. */
const ERRORS = {
  noToken: envelope(400, { code: 400, message: 'Token is required!', data: null, code_message: 'USER_ERR_COMMON' }),
  badToken: envelope(400, { code: 400, message: 'code=401, message=Token is not valid!', data: null }),
  badShop: envelope(400, {
    code: 400,
    message: 'ShopID is invalid: Lỗi gọi API: corev2_tenant_shop - Shop ID is invalid: %!s',
    data: null,
    code_message: 'SHOP_NOT_FOUND',
  }),
  syntax: envelope(400, {
    code: 400,
    message: 'code=400, message=Syntax error: offset=0, error=invalid character, internal=',
    data: null,
    code_message: 'USER_ERR_COMMON',
  }),
  notFound: (orderCode: string) =>
    envelope(
      400,
      {
        code: 400,
        message: 'Lỗi gọi API: corev2_tenant_order_detail - code=404, message=Đơn hàng không tồn tại',
        data: null,
      },
      orderCode,
    ),
  feesNotFound: (orderCode: string) =>
    envelope(404, { code: 404, message: 'Không tìm thấy thông tin đơn hàng' }, orderCode),
};

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** GHN's order detail (by GHN's code or the shop's own) and fee calls, with its token and shop checks. */
export async function handleGhnRequest(
  context: SandboxCarrierContext,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  hanging: HangingRequests,
): Promise<void> {
  if (req.method !== 'POST' || ![DETAIL, DETAIL_BY_CLIENT_CODE, FEES].includes(path))
    return sendJson(res, 404, { code: 404, message: `no such operation: ${req.method} ${path}`, data: null });
  const answer = await answerGhn(context, path, req);
  return respond(context, 'ghn', answer.orderCode, answer, res, hanging);
}

async function answerGhn({ world, clock }: SandboxCarrierContext, path: string, req: IncomingMessage): Promise<Answer> {
  let text: string;
  try {
    text = await readBody(req);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return envelope(413, { code: 413, message: error.message, data: null });
    throw error;
  }
  const token = header(req, 'token');
  if (token === undefined || token === '') return ERRORS.noToken;
  const account = world.findAccountByKey(token);
  if (account === undefined) return ERRORS.badToken;
  let request: { order_code?: unknown; client_order_code?: unknown };
  try {
    request = JSON.parse(text) ?? {};
  } catch {
    return ERRORS.syntax;
  }
  const now = clock.now();
  if (path === DETAIL_BY_CLIENT_CODE) {
    const clientCode = typeof request.client_order_code === 'string' ? request.client_order_code : '';
    const plan = findByClientCode(world, account, clientCode);
    const detail = plan === undefined ? undefined : ghnOrderDetail(plan, now);
    return detail === undefined ? ERRORS.notFound(clientCode) : success([detail], detail.order_code);
  }
  const orderCode = typeof request.order_code === 'string' ? request.order_code : '';
  const plan = world.findOrder(orderCode);
  const ownPlan = plan?.account.index === account.index ? plan : undefined;
  if (path === FEES) {
    if (header(req, 'shopid') !== String(ghnShopId(account))) return ERRORS.badShop;
    const fees = ownPlan === undefined ? undefined : ghnOrderFees(ownPlan, now);
    return fees === undefined ? ERRORS.feesNotFound(orderCode) : success(fees, orderCode);
  }
  const detail = ownPlan === undefined ? undefined : ghnOrderDetail(ownPlan, now);
  return detail === undefined ? ERRORS.notFound(orderCode) : success(detail, orderCode);
}

/** The shop's own order ids are unique per shop: a scan of the account's orders finds one. */
function findByClientCode(world: SandboxWorld, account: Account, clientCode: string) {
  if (clientCode === '') return undefined;
  for (const plan of world.orders(account.index)) if (plan.externalCode === clientCode) return plan;
  return undefined;
}
