import type { ServerResponse } from 'node:http';
import { TRACKING_ERROR } from '../../carriers/247express/contract.js';
import type { FaultInjector, FaultKind, Operation } from '../fault-injector.js';
import { JSON_CONTENT_TYPE, sendJson, sendText } from './http-exchange.js';
import { trackingErrorResult } from './tracking-lookup.js';

export interface Answer {
  status: number;
  /** The answer's body, serialized. */
  json: string | Buffer;
  /** The order the request names, for faults scripted for one order. */
  orderCode?: string;
}

/** Sockets of hung requests, closed when their time is up or the sandbox stops. */
export type HangingRequests = Set<NodeJS.Timeout>;

/** Sends an answer after the injected latency, or the injected fault instead. */
export async function respond(
  { faults }: { readonly faults: FaultInjector },
  operation: Operation,
  orderCode: string | undefined,
  answer: Answer,
  res: ServerResponse,
  hanging: HangingRequests,
): Promise<void> {
  const fault: FaultKind | undefined = faults.pick(operation, orderCode);
  const latency = faults.latencyMs();
  if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
  switch (fault) {
    case undefined:
      return sendText(res, answer.status, answer.json, JSON_CONTENT_TYPE);
    case 'exception':
      // An error answer like any other: no order data beside the error.
      return sendJson(res, 200, trackingErrorResult(TRACKING_ERROR.EXCEPTION, orderCode ?? null));
    case 'server_error': {
      const status = faults.pickServerErrorStatus();
      return sendText(res, status, `<html><body><h1>${status}</h1>Service unavailable</body></html>`, 'text/html');
    }
    case 'rate_limited':
      return sendText(res, 429, 'Too Many Requests', 'text/plain', {
        'retry-after': String(faults.current.retryAfterSeconds),
      });
    case 'malformed': {
      const json = answer.json.toString();
      return sendText(res, 200, json.slice(0, Math.max(1, Math.floor(json.length / 2))), JSON_CONTENT_TYPE);
    }
    case 'reset':
      res.socket?.destroy();
      return;
    case 'hang': {
      const timer = setTimeout(() => {
        hanging.delete(timer);
        res.socket?.destroy();
      }, faults.current.hangMs);
      hanging.add(timer);
      return;
    }
  }
}
