import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  carrierDayOf,
  describeIssues,
  formatCarrierDateTime,
  instantToEpochMs,
  parseCarrierInstant,
} from '../../carriers/247express/contract.js';
import { FAULT_KINDS } from '../fault-injector.js';
import { ghnShopId } from '../ghn/ghn-orders.js';
import { ghnAnomalies } from '../ghn/ghn-truth.js';
import { SandboxOptionsSchema } from '../sandbox-options.js';
import type { SandboxState } from '../sandbox-state.js';
import { statementCsv } from '../world/payout-statements.js';
import { readBody, sendJson } from './http-exchange.js';

const ClockMoveSchema = z
  .object({
    advanceMs: z.number().min(0).optional(),
    advanceHours: z.number().min(0).optional(),
    advanceDays: z.number().min(0).optional(),
    to: z.string().optional(),
  })
  .strict();

const ScriptedFaultSchema = z
  .object({
    kind: z.enum(FAULT_KINDS),
    operation: z.enum(['tracking', 'price', 'images', 'ghn']).optional(),
    orderCode: z.string().optional(),
    times: z.number().int().min(1).default(1),
  })
  .strict();

/**
 * A patch of one group of settings: any of its fields, and only those it names. The fields' defaults
 * are dropped first: zod fills a missing field with its default even in a partial schema, so a patch
 * would otherwise reset every setting it does not name.
 */
function patchOf<S extends z.ZodObject>(settings: S): z.ZodType<Partial<z.output<S>>> {
  const fields = Object.fromEntries(
    Object.entries(settings.shape).map(([name, field]) => [
      name,
      field instanceof z.ZodDefault ? field.unwrap() : field,
    ]),
  );
  return z.object(fields).partial().strict() as unknown as z.ZodType<Partial<z.output<S>>>;
}

const optionShape = SandboxOptionsSchema.shape;
const LimitsPatchSchema = patchOf(optionShape.limits.unwrap());
const FaultsPatchSchema = patchOf(optionShape.faults.unwrap());
const CallbacksPatchSchema = patchOf(optionShape.callbacks.unwrap());
const GhnWebhooksPatchSchema = patchOf(optionShape.ghn.unwrap().shape.webhooks.unwrap());

/** The address GHN's webhooks go to, shown without its query: the shop's token is in it. */
function ghnWebhookSettingsShown(state: SandboxState) {
  const { url, ...rest } = state.ghnWebhooks.current;
  return { ...rest, url: url === undefined ? undefined : url.split('?', 1)[0] };
}

/**
 * The sandbox's own control and ground-truth API under `/_sandbox/`: move the clock, change limits,
 * faults and callbacks while it runs, and read what it generated and counted, so tests and audits
 * can be scored against the truth.
 */
export async function handleControl(
  state: SandboxState,
  path: string,
  params: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const route = `${req.method} ${path}`;
  const body = async <S extends z.ZodType>(schema: S): Promise<z.output<S> | undefined> => {
    let value: unknown;
    try {
      const text = await readBody(req);
      value = text === '' ? {} : JSON.parse(text);
    } catch {
      sendJson(res, 400, { error: 'body is not JSON' });
      return undefined;
    }
    const checked = schema.safeParse(value);
    if (!checked.success) {
      sendJson(res, 400, { error: describeIssues(checked.error.issues, 'control request') });
      return undefined;
    }
    return checked.data;
  };

  switch (route) {
    case 'GET /_sandbox/health':
      return sendJson(res, 200, { ok: true });
    case 'GET /_sandbox/state':
      return sendJson(res, 200, describeState(state));
    case 'POST /_sandbox/clock': {
      const move = await body(ClockMoveSchema);
      if (!move) return;
      let target =
        state.clock.now() +
        (move.advanceMs ?? 0) +
        (move.advanceHours ?? 0) * 3_600_000 +
        (move.advanceDays ?? 0) * 86_400_000;
      if (move.to !== undefined) {
        const instant = parseCarrierInstant(move.to);
        if (!instant) return sendJson(res, 400, { error: `not a date-time: ${move.to}` });
        target = instantToEpochMs(instant);
      }
      if (target < state.clock.now()) return sendJson(res, 400, { error: 'the sandbox clock only moves forward' });
      const callbacks = state.moveClockTo(target);
      return sendJson(res, 200, { now: formatCarrierDateTime(state.clock.now()), callbacksQueued: callbacks });
    }
    case 'GET /_sandbox/usage':
      return sendJson(res, 200, state.quota.usage());
    case 'POST /_sandbox/limits': {
      const patch = await body(LimitsPatchSchema);
      if (!patch) return;
      state.quota.configure(patch);
      return sendJson(res, 200, state.quota.current);
    }
    case 'POST /_sandbox/faults': {
      const patch = await body(FaultsPatchSchema);
      if (!patch) return;
      state.faults.configure(patch);
      return sendJson(res, 200, state.faults.current);
    }
    case 'POST /_sandbox/faults/script': {
      const fault = await body(ScriptedFaultSchema);
      if (!fault) return;
      state.faults.script(fault);
      return sendJson(res, 200, { scripted: fault });
    }
    case 'POST /_sandbox/callbacks': {
      const patch = await body(CallbacksPatchSchema);
      if (!patch) return;
      state.callbacks.configure(patch);
      return sendJson(res, 200, { ...state.callbacks.current, basicPassword: undefined });
    }
    case 'POST /_sandbox/callbacks/flush':
      await state.callbacks.idle();
      return sendJson(res, 200, { ok: true });
    case 'GET /_sandbox/truth/callbacks':
      return sendJson(res, 200, state.callbacks.history());
    case 'POST /_sandbox/ghn/webhooks': {
      const patch = await body(GhnWebhooksPatchSchema);
      if (!patch) return;
      state.ghnWebhooks.configure(patch);
      return sendJson(res, 200, ghnWebhookSettingsShown(state));
    }
    case 'POST /_sandbox/ghn/webhooks/flush':
      await state.ghnWebhooks.idle();
      return sendJson(res, 200, { ok: true });
    case 'GET /_sandbox/truth/ghn/webhooks':
      return sendJson(res, 200, state.ghnWebhooks.history());
    case 'GET /_sandbox/payouts/statement':
    case 'GET /_sandbox/truth/payouts': {
      const month = params.get('month') ?? '';
      if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month))
        return sendJson(res, 400, { error: `month: ${month === '' ? 'missing' : month}; give month=YYYY-MM` });
      const payouts = state.truth.payouts(month);
      if (path === '/_sandbox/truth/payouts') return sendJson(res, 200, payouts.anomalies);
      res.writeHead(200, {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="bang-ke-247express-${month}.csv"`,
      });
      res.end(statementCsv(payouts.lines));
      return;
    }
    case 'GET /_sandbox/truth/anomalies':
      // ?carrier=ghn: the GHN world's, with the check that must find each.
      if (params.get('carrier') === 'ghn') return sendJson(res, 200, ghnAnomalies(state.ghnWorld, state.clock.now()));
      return sendJson(res, 200, state.truth.anomalies());
    case 'GET /_sandbox/truth/orders': {
      res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8' });
      for (const order of state.truth.orders(params.get('account') ?? undefined)) {
        if (!res.write(`${JSON.stringify(order)}\n`)) await new Promise((resolve) => res.once('drain', resolve));
      }
      res.end();
      return;
    }
    default:
      return sendJson(res, 404, { error: `no such sandbox control route: ${route}` });
  }
}

function describeState(state: SandboxState) {
  const now = state.clock.now();
  return {
    now: formatCarrierDateTime(now),
    carrierDay: carrierDayOf(now, state.quota.current.dayUtcOffsetMinutes),
    clockMode: state.clock.mode,
    accounts: state.world.accounts.map((a) => ({
      alias: a.alias,
      clientHubID: a.clientHubID,
      hubProvince: a.hubProvince.name,
      orders: state.world.options.ordersPerAccount,
    })),
    ghnAccounts: state.ghnWorld.accounts.map((a) => ({
      alias: a.alias,
      shopId: ghnShopId(a),
      orders: state.ghnWorld.options.ordersPerAccount,
    })),
    limits: state.quota.current,
    faults: state.faults.current,
    callbacks: { ...state.callbacks.current, basicPassword: undefined },
    ghnWebhooks: ghnWebhookSettingsShown(state),
  };
}
