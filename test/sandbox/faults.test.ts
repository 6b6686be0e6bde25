/**
 * The sandbox's injected faults, seen from a client: each kind observable on every operation through
 * its rate, and on one order alone through /_sandbox/faults/script; latency delays answers.
 */
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_PATHS, TRACKING_ERROR } from '../../src/carriers/247express/contract.js';
import { FAULT_KINDS, type FaultKind, type FaultSettings, type Operation } from '../../src/sandbox/fault-injector.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { httpGet, mapConcurrent, postControl, startTestSandbox, trackingUrl } from './sandbox-http.js';

/**
 * Short, so a hung request is closed quickly; the client gives up before it, yet leaves a proper
 * answer ample time on a busy machine.
 */
const HANG_MS = 600;
const CLIENT_TIMEOUT_MS = 400;
const RETRY_AFTER_SECONDS = 7;

const NO_FAULTS: Partial<FaultSettings> = {
  latencyMinMs: 0,
  latencyMaxMs: 0,
  exceptionRate: 0,
  serverErrorRate: 0,
  resetRate: 0,
  hangRate: 0,
  malformedRate: 0,
  rateLimitRate: 0,
};

const RATE_OF: Record<FaultKind, keyof FaultSettings> = {
  exception: 'exceptionRate',
  server_error: 'serverErrorRate',
  reset: 'resetRate',
  hang: 'hangRate',
  malformed: 'malformedRate',
  rate_limited: 'rateLimitRate',
};

let sandbox: RunningSandbox;
let apiKey: string;
let hubID: string;
let [orderA, orderB] = ['', ''];

beforeAll(async () => {
  sandbox = await startTestSandbox({
    seed: 4,
    ordersPerAccount: 20,
    faults: { hangMs: HANG_MS, retryAfterSeconds: RETRY_AFTER_SECONDS },
  });
  const [account] = sandbox.state.world.accounts;
  apiKey = account!.apiKey;
  hubID = account!.clientHubID;
  orderA = sandbox.state.world.orderCode(0, 0);
  orderB = sandbox.state.world.orderCode(0, 1);
});

afterEach(async () => {
  await postControl(sandbox, '/_sandbox/faults', NO_FAULTS);
});

afterAll(async () => {
  await sandbox.stop();
});

type Outcome =
  | { kind: 'answer'; status: number; headers: Record<string, string | string[] | undefined>; text: string; ms: number }
  | { kind: 'transport'; code: string; ms: number };

/**
 * One request of an operation about an order, as a client that gives up after `timeoutMs` sees it.
 * (An abort signal, not undici's headersTimeout, whose timer is too coarse for a fraction of a second.)
 */
async function send(operation: Operation, orderCode: string, timeoutMs = CLIENT_TIMEOUT_MS): Promise<Outcome> {
  const started = performance.now();
  const target =
    operation === 'tracking'
      ? { url: trackingUrl(sandbox, { apiKey, ordercode: orderCode }), method: 'GET' as const, body: undefined }
      : operation === 'images'
        ? {
            url: `${sandbox.url}${OPERATION_PATHS.images}`,
            method: 'POST' as const,
            body: JSON.stringify({ OrderCode: orderCode }),
          }
        : {
            url: `${sandbox.url}${OPERATION_PATHS.price}`,
            method: 'POST' as const,
            body: JSON.stringify({
              ToProvinceName: 'Hà Nội',
              ToDistrictName: 'Quận Cầu Giấy',
              ToWardName: 'Phường Dịch Vọng',
              Length: 10,
              Width: 10,
              Height: 10,
              RealWeight: 1,
              ClientHubID: hubID,
              ServiceTypeID: 'DE',
              OrderCode: orderCode,
            }),
          };
  try {
    const answer = await request(target.url, {
      method: target.method,
      headers: { 'content-type': 'application/json', ApiKey: apiKey },
      body: target.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await answer.body.text();
    return {
      kind: 'answer',
      status: answer.statusCode,
      headers: answer.headers,
      text,
      ms: performance.now() - started,
    };
  } catch (error) {
    const { name, code } = error as { name?: string; code?: unknown };
    return {
      kind: 'transport',
      code: name === 'TimeoutError' ? 'CLIENT_TIMEOUT' : String(code),
      ms: performance.now() - started,
    };
  }
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The fault a client saw, or 'none' for a proper answer. */
function faultSeen(outcome: Outcome): FaultKind | 'none' {
  if (outcome.kind === 'transport') {
    if (outcome.code === 'CLIENT_TIMEOUT') return 'hang';
    if (outcome.code === 'UND_ERR_SOCKET' || outcome.code === 'ECONNRESET') return 'reset';
    throw new Error(`unexpected transport error ${outcome.code}`);
  }
  if (outcome.status === 429)
    return outcome.headers['retry-after'] === String(RETRY_AFTER_SECONDS) ? 'rate_limited' : 'none';
  if ([500, 502, 503].includes(outcome.status))
    return String(outcome.headers['content-type']).startsWith('text/html') ? 'server_error' : 'none';
  if (outcome.status !== 200) throw new Error(`unexpected HTTP ${outcome.status}: ${outcome.text.slice(0, 100)}`);
  if (!parsesAsJson(outcome.text)) return 'malformed';
  const body = JSON.parse(outcome.text) as { errorCode?: string | null; IsError?: boolean };
  if (body.errorCode === TRACKING_ERROR.EXCEPTION) return 'exception';
  if (body.errorCode !== undefined && body.errorCode !== null)
    throw new Error(`unexpected tracking error ${body.errorCode}`);
  if (body.IsError === true) throw new Error(`unexpected failed answer: ${outcome.text.slice(0, 200)}`);
  return 'none';
}

const OPERATIONS: Operation[] = ['tracking', 'price', 'images'];

describe('faults by rate', () => {
  it('answers properly with no faults configured', async () => {
    for (const operation of OPERATIONS) expect(faultSeen(await send(operation, orderA))).toBe('none');
  });

  it.each(FAULT_KINDS.filter((k) => k !== 'exception'))('%s at rate 1 hits every operation', async (kind) => {
    await postControl(sandbox, '/_sandbox/faults', { [RATE_OF[kind]]: 1 });
    for (const operation of OPERATIONS) expect(faultSeen(await send(operation, orderA)), operation).toBe(kind);
  });

  it('exception at rate 1 hits the tracking lookup only', async () => {
    await postControl(sandbox, '/_sandbox/faults', { exceptionRate: 1 });
    expect(faultSeen(await send('tracking', orderA))).toBe('exception');
    expect(faultSeen(await send('price', orderA))).toBe('none');
    expect(faultSeen(await send('images', orderA))).toBe('none');
  });

  it('closes a hung connection after hangMs when the client waits', async () => {
    await postControl(sandbox, '/_sandbox/faults', { hangRate: 1 });
    const outcome = await send('tracking', orderA, 10_000);
    expect(outcome).toMatchObject({ kind: 'transport', code: 'UND_ERR_SOCKET' });
    expect(outcome.ms).toBeGreaterThanOrEqual(HANG_MS - 5);
    expect(outcome.ms).toBeLessThan(HANG_MS + 1_000);
  });

  it('delays every answer by at least latencyMinMs', async () => {
    await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 150, latencyMaxMs: 150 });
    for (const operation of OPERATIONS) {
      const outcome = await send(operation, orderA, 5_000);
      expect(faultSeen(outcome)).toBe('none');
      expect(outcome.ms, operation).toBeGreaterThanOrEqual(148);
    }
    await postControl(sandbox, '/_sandbox/faults', { latencyMinMs: 60, latencyMaxMs: 120 });
    const times = await Promise.all(Array.from({ length: 6 }, () => send('tracking', orderA, 5_000)));
    for (const t of times) expect(t.ms).toBeGreaterThanOrEqual(58);
  });

  it('injects a partial rate on about that share of requests', async () => {
    await postControl(sandbox, '/_sandbox/faults', { serverErrorRate: 0.5 });
    // Every request answered before the test ends: none left for the server to handle under a later script.
    const seen = await mapConcurrent(
      Array.from({ length: 100 }, () => orderA),
      8,
      (code) => send('tracking', code, 5_000),
    );
    const failed = seen.filter((o) => faultSeen(o) === 'server_error').length;
    expect(failed).toBeGreaterThan(25);
    expect(failed).toBeLessThan(75);
  });

  it('leaves the control API alone', async () => {
    await postControl(sandbox, '/_sandbox/faults', { serverErrorRate: 1 });
    const health = await httpGet(`${sandbox.url}/_sandbox/health`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toEqual({ ok: true });
  });
});

describe('scripted faults', () => {
  it.each(FAULT_KINDS)('%s for one order hits that order once, and no other', async (kind) => {
    await postControl(sandbox, '/_sandbox/faults/script', { kind, orderCode: orderA });
    expect(faultSeen(await send('tracking', orderB))).toBe('none');
    expect(faultSeen(await send('tracking', orderA))).toBe(kind);
    expect(faultSeen(await send('tracking', orderA))).toBe('none');
  });

  it('hits an operation as many times as scripted', async () => {
    await postControl(sandbox, '/_sandbox/faults/script', { kind: 'server_error', operation: 'price', times: 2 });
    expect(faultSeen(await send('tracking', orderA))).toBe('none');
    expect(faultSeen(await send('price', orderA))).toBe('server_error');
    expect(faultSeen(await send('images', orderA))).toBe('none');
    expect(faultSeen(await send('price', orderB))).toBe('server_error');
    expect(faultSeen(await send('price', orderA))).toBe('none');
  });

  it('keeps a scripted exception for the tracking lookup, even when the order is asked for its images first', async () => {
    await postControl(sandbox, '/_sandbox/faults/script', { kind: 'exception', orderCode: orderA });
    expect(faultSeen(await send('images', orderA))).toBe('none');
    expect(faultSeen(await send('tracking', orderA))).toBe('exception');
  });

  it('refuses a script with an unknown kind', async () => {
    const answer = await fetch(`${sandbox.url}/_sandbox/faults/script`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'meteor' }),
    });
    expect(answer.status).toBe(400);
  });
});
