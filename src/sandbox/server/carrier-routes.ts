import type { IncomingMessage, ServerResponse } from 'node:http';
import { OPERATION_PATHS } from '../../carriers/247express/contract.js';
import type { Operation } from '../fault-injector.js';
import type { SandboxState } from '../sandbox-state.js';
import { type Answer, type HangingRequests, respond } from './faulty-answer.js';
import { BodyTooLargeError, queryParam, readBody, sendJson, sendText } from './http-exchange.js';
import { answerOrderImages, imageFileBytes } from './order-images.js';
import { answerPriceCalculation, priceFailure } from './price-calculation.js';
import { answerTrackingLookup } from './tracking-lookup.js';

const IMAGE_PATH = /^\/images\/([A-Za-z0-9_-]{1,40})\/(\d{1,3})\.jpg$/;

/** The carrier's three operations and the image files its image links point at. */
export async function handleCarrierRequest(
  state: SandboxState,
  baseUrl: string,
  path: string,
  params: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
  hanging: HangingRequests,
): Promise<void> {
  if (req.method === 'GET' && path === OPERATION_PATHS.tracking) {
    const orderCode = queryParam(params, 'ordercode');
    const json = answerTrackingLookup(
      state.world,
      state.quota,
      state.trackingAnswers,
      state.clock.now(),
      queryParam(params, 'apiKey'),
      orderCode,
    );
    return respond(state, 'tracking', orderCode, { status: 200, json }, res, hanging);
  }
  if (req.method === 'POST' && (path === OPERATION_PATHS.price || path === OPERATION_PATHS.images)) {
    const operation: Operation = path === OPERATION_PATHS.price ? 'price' : 'images';
    const answer = await answerCustomerOperation(state, baseUrl, operation, req);
    return respond(state, operation, answer.orderCode, answer, res, hanging);
  }
  const image = req.method === 'GET' ? IMAGE_PATH.exec(path) : null;
  if (image) {
    const plan = state.world.findOrder(image[1]!);
    const no = Number(image[2]);
    if (!plan || no < 1 || no > plan.imageCount) return sendJson(res, 404, { error: 'no such image' });
    return sendText(
      res,
      200,
      imageFileBytes(state.options.seed, plan.code, no, state.options.imageBytes),
      'image/jpeg',
    );
  }
  sendJson(res, 404, { error: `no such operation: ${req.method} ${path}` });
}

async function answerCustomerOperation(
  state: SandboxState,
  baseUrl: string,
  operation: Operation,
  req: IncomingMessage,
): Promise<Answer> {
  const failure = (message: string) =>
    JSON.stringify(
      operation === 'price'
        ? priceFailure([{ Field: '', Message: message }])
        : { Items: [], Errors: [{ Code: 'INVALID_REQUEST', Message: message }], ErrorMessage: message },
    );
  let text: string;
  try {
    text = await readBody(req);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return { status: 413, json: failure(error.message) };
    throw error;
  }
  const header = req.headers[state.options.customerAuthHeader.toLowerCase()];
  const apiKey = Array.isArray(header) ? header[0] : header;
  const account = apiKey === undefined ? undefined : state.world.findAccountByKey(apiKey);
  if (!account) {
    return {
      status: 401,
      json: failure(apiKey === undefined ? `missing ${state.options.customerAuthHeader} header` : 'API key not found'),
    };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { status: 400, json: failure('request body is not JSON') };
  }
  const named = (body as { OrderCode?: unknown } | null)?.OrderCode;
  const orderCode = typeof named === 'string' ? named : undefined;
  if (operation === 'price')
    return { status: 200, json: JSON.stringify(answerPriceCalculation(state.world, account, body)), orderCode };
  return {
    status: 200,
    json: JSON.stringify(answerOrderImages(state.world, account, state.clock.now(), baseUrl, body)),
    orderCode,
  };
}
