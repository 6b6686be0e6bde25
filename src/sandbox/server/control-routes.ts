import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  carrierDayOf,
  describeIssues,
  formatCarrierDateTime,
  instantToEpochMs,
  parseCarrierInstant,
} from '../../carriers/247express/contract.js';
import { EXPRESS_OPERATIONS, FAULT_KINDS } from '../fault-injector.js';
import { SandboxOptionsSchema, webhookSettingsSchema } from '../sandbox-options.js';
import type { SandboxState, ServedCarrier } from '../sandbox-state.js';
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
    /** One of 247Express's operations, or the id of a carrier served beside it (checked against the state's). */
    operation: z.string().optional(),
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

/** The address a carrier's webhooks go to, shown without its query: the shop's token may be in it. */
function webhookSettingsShown({ webhooks }: ServedCarrier) {
  const { url, ...rest } = webhooks.current;
  return { ...rest, url: url === undefined ? undefined : url.split('?', 1)[0] };
}

/** `/_sandbox/<carrier>/webhooks[/flush]` and `/_sandbox/truth/<carrier>/webhooks`: a served carrier's webhooks. */
const CARRIER_WEBHOOKS_ROUTE = /^\/_sandbox\/(truth\/)?([a-z0-9-]+)\/webhooks(\/flush)?$/;

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

  const webhooksRoute = CARRIER_WEBHOOKS_ROUTE.exec(path);
  const served = webhooksRoute ? state.carriers.get(webhooksRoute[2]!) : undefined;
  if (webhooksRoute && served) {
    const [, truth, , flush] = webhooksRoute;
    if (truth && !flush && req.method === 'GET') return sendJson(res, 200, served.webhooks.history());
    if (!truth && flush && req.method === 'POST') {
      await served.webhooks.idle();
      return sendJson(res, 200, { ok: true });
    }
    if (!truth && !flush && req.method === 'POST') {
      const patch = await body(patchOf(webhookSettingsSchema(served.carrier)));
      if (!patch) return;
      served.webhooks.configure(patch);
      return sendJson(res, 200, webhookSettingsShown(served));
    }
  }

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
      const operations: readonly string[] = [...EXPRESS_OPERATIONS, ...state.carriers.keys()];
      if (fault.operation !== undefined && !operations.includes(fault.operation))
        return sendJson(res, 400, { error: `operation: one of ${operations.join(', ')}` });
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
    case 'GET /_sandbox/truth/anomalies': {
      // ?carrier=ID: a served carrier's world's, with the check that must find each.
      const carrierId = params.get('carrier');
      if (carrierId === null) return sendJson(res, 200, state.truth.anomalies());
      const carrier = state.carriers.get(carrierId);
      if (carrier === undefined) return sendJson(res, 404, { error: `the sandbox serves no carrier ${carrierId}` });
      return sendJson(res, 200, carrier.carrier.anomalies(carrier.world, state.clock.now()));
    }
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
    limits: state.quota.current,
    faults: state.faults.current,
    callbacks: { ...state.callbacks.current, basicPassword: undefined },
    carriers: Object.fromEntries(
      [...state.carriers.values()].map((served) => [
        served.carrier.id,
        {
          basePath: served.carrier.basePath,
          accounts: served.world.accounts.map((a) => ({
            alias: a.alias,
            ...(served.carrier.shopOf ? { shop: served.carrier.shopOf(a) } : {}),
            orders: served.world.options.ordersPerAccount,
          })),
          webhooks: webhookSettingsShown(served),
        },
      ]),
    ),
  };
}
