/** Helpers the sandbox tests share: a running sandbox, its HTTP operations and its ground truth. */
import pLimit from 'p-limit';
import { request } from 'undici';
import {
  checkTrackingResult,
  instantToEpochMs,
  OPERATION_PATHS,
  type PriceRequestWire,
  type PriceResult,
  PriceResultSchema,
  parseCarrierInstant,
  type TrackingError,
  type TrackingSnapshot,
} from '../../src/carriers/247express/contract.js';
import type { CallbackRecord } from '../../src/sandbox/callback-sender.js';
import type { AnomalyTruth, OrderTruth } from '../../src/sandbox/ground-truth.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/sandbox.js';
import type { SandboxOptionsInput } from '../../src/sandbox/sandbox-options.js';

export const DEFAULT_START = '2026-11-20T22:00:00+07:00';
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export async function startTestSandbox(options: SandboxOptionsInput = {}): Promise<RunningSandbox> {
  return startSandbox({ port: 0, host: '127.0.0.1', clockMode: 'manual', start: DEFAULT_START, ...options });
}

/** The API key of each account alias (keys are not in /_sandbox/state; the process holding the sandbox knows them). */
export function keysOf(sandbox: RunningSandbox): Record<string, string> {
  return Object.fromEntries(sandbox.state.world.accounts.map((a) => [a.alias, a.apiKey]));
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export async function httpGet(url: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const answer = await request(url, { method: 'GET', headers });
  return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
}

export async function httpPost(url: string, body: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  const answer = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: answer.statusCode, headers: answer.headers, text: await answer.body.text() };
}

export async function getJson<T>(url: string): Promise<T> {
  const answer = await httpGet(url);
  if (answer.status !== 200) throw new Error(`GET ${url}: HTTP ${answer.status}: ${answer.text}`);
  return JSON.parse(answer.text) as T;
}

export async function postControl<T>(sandbox: RunningSandbox, path: string, body: unknown = {}): Promise<T> {
  const answer = await httpPost(`${sandbox.url}${path}`, JSON.stringify(body));
  if (answer.status !== 200) throw new Error(`POST ${path}: HTTP ${answer.status}: ${answer.text}`);
  return JSON.parse(answer.text) as T;
}

/** The tracking lookup URL with the given query parameters, each encoded; undefined ones left out. */
export function trackingUrl(sandbox: { readonly url: string }, params: Record<string, string | undefined>): string {
  const query = Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
  return `${sandbox.url}${OPERATION_PATHS.tracking}${query === '' ? '' : `?${query}`}`;
}

export async function trackRaw(
  sandbox: RunningSandbox,
  params: Record<string, string | undefined>,
): Promise<HttpAnswer> {
  return httpGet(trackingUrl(sandbox, params));
}

/** A tracking lookup's answer, read through the contract; any payload the contract rejects fails the test. */
export async function track(
  sandbox: RunningSandbox,
  apiKey: string | undefined,
  orderCode: string | undefined,
  keyParam = 'apiKey',
) {
  const answer = await trackRaw(sandbox, { [keyParam]: apiKey, ordercode: orderCode });
  if (answer.status !== 200)
    throw new Error(`tracking lookup answered HTTP ${answer.status}: ${answer.text.slice(0, 200)}`);
  const wire = JSON.parse(answer.text) as Record<string, unknown>;
  const checked = checkTrackingResult(wire);
  if (!checked.ok) throw new Error(checked.message);
  return { wire, result: checked.value };
}

export async function trackSnapshot(
  sandbox: RunningSandbox,
  apiKey: string,
  orderCode: string,
): Promise<TrackingSnapshot> {
  const { result } = await track(sandbox, apiKey, orderCode);
  if (result.kind !== 'snapshot') throw new Error(`${orderCode}: expected a snapshot, got ${result.error.errorCode}`);
  return result.snapshot;
}

export async function trackError(
  sandbox: RunningSandbox,
  apiKey: string | undefined,
  orderCode: string | undefined,
  keyParam = 'apiKey',
): Promise<{ wire: Record<string, unknown>; error: TrackingError }> {
  const { wire, result } = await track(sandbox, apiKey, orderCode, keyParam);
  if (result.kind !== 'error')
    throw new Error(`expected an error answer, got the snapshot of ${result.snapshot.orderCode}`);
  return { wire, error: result.error };
}

/** A price quote, read through the contract. */
export async function quotePrice(
  sandbox: RunningSandbox,
  apiKey: string,
  body: PriceRequestWire,
): Promise<PriceResult> {
  const answer = await httpPost(`${sandbox.url}${OPERATION_PATHS.price}`, JSON.stringify(body), { ApiKey: apiKey });
  if (answer.status !== 200)
    throw new Error(`price calculation answered HTTP ${answer.status}: ${answer.text.slice(0, 200)}`);
  return PriceResultSchema.parse(JSON.parse(answer.text));
}

export interface Parcel {
  readonly length: number;
  readonly width: number;
  readonly height: number;
  readonly realWeight: number;
  readonly serviceTypeID: string;
}

/** The quote request for an order's own parcel: its destination (from the truth), measures, service and its account's hub. */
export function quoteRequestFor(order: OrderTruth, parcel: Parcel, clientHubID: string): PriceRequestWire {
  return {
    ToProvinceName: order.destination.provinceName,
    ToDistrictName: order.destination.districtName,
    ToWardName: order.destination.wardName,
    Length: parcel.length,
    Width: parcel.width,
    Height: parcel.height,
    RealWeight: parcel.realWeight,
    ClientHubID: clientHubID,
    ServiceTypeID: parcel.serviceTypeID,
  };
}

/** The client hub of each account alias, as /_sandbox/state lists the accounts. */
export async function clientHubs(sandbox: RunningSandbox): Promise<Record<string, string>> {
  const state = await getJson<{ accounts: { alias: string; clientHubID: string }[] }>(`${sandbox.url}/_sandbox/state`);
  return Object.fromEntries(state.accounts.map((a) => [a.alias, a.clientHubID]));
}

export async function truthOrders(sandbox: RunningSandbox): Promise<OrderTruth[]> {
  const answer = await httpGet(`${sandbox.url}/_sandbox/truth/orders`);
  return answer.text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as OrderTruth);
}

export async function truthAnomalies(sandbox: RunningSandbox): Promise<AnomalyTruth[]> {
  return getJson<AnomalyTruth[]>(`${sandbox.url}/_sandbox/truth/anomalies`);
}

export async function truthCallbacks(sandbox: RunningSandbox): Promise<CallbackRecord[]> {
  return getJson<CallbackRecord[]>(`${sandbox.url}/_sandbox/truth/callbacks`);
}

/** Runs `task` over `items` with at most `concurrency` at once, keeping the items' order in the result. */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const limit = pLimit(concurrency);
  return Promise.all(items.map((item) => limit(() => task(item))));
}

/** Epoch milliseconds of a carrier date-time text (with or without an offset, up to seven fraction digits). */
export function epochOf(carrierDateTime: string): number {
  const instant = parseCarrierInstant(carrierDateTime);
  if (instant === undefined) throw new Error(`not a date-time: ${carrierDateTime}`);
  return instantToEpochMs(instant);
}
