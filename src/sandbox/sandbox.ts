import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SandboxCarrier } from './carriers/sandbox-carrier.js';
import { SANDBOX_CARRIERS } from './carriers/sandbox-carriers.js';
import { type SandboxOptionsInput, sandboxOptionsSchema } from './sandbox-options.js';
import { type SandboxLogger, SandboxState } from './sandbox-state.js';
import { handleCarrierRequest } from './server/carrier-routes.js';
import { handleControl } from './server/control-routes.js';
import type { HangingRequests } from './server/faulty-answer.js';
import { sendJson } from './server/http-exchange.js';

export interface RunningSandbox {
  /** `http://127.0.0.1:PORT`: the tracking URL and the base URL of the customer operations. */
  readonly url: string;
  readonly port: number;
  readonly state: SandboxState;
  /** Moves the sandbox's clock forward and queues the callbacks of the changes it passed. */
  advance(ms: number): number;
  stop(): Promise<void>;
}

const silentLogger: SandboxLogger = { info: () => {}, warn: () => {} };

/** How often a realtime clock's passing status changes are turned into callbacks. */
const REALTIME_CALLBACK_TICK_MS = 1_000;

/**
 * Starts the carrier sandbox: 247Express's tracking lookup, price calculation and order images
 * operations over HTTP, each other carrier's API below its base path (sandbox-carriers.ts), the
 * control API under `/_sandbox/`, and the callbacks and webhooks.
 */
export async function startSandbox(
  input: SandboxOptionsInput = {},
  logger: SandboxLogger = silentLogger,
  carriers: readonly SandboxCarrier[] = SANDBOX_CARRIERS,
): Promise<RunningSandbox> {
  const options = sandboxOptionsSchema(carriers).parse(input);
  const state = new SandboxState(options, logger, carriers);
  const hanging: HangingRequests = new Set();
  let baseUrl = '';

  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const served = [...state.carriers.values()].find(({ carrier }) => path.startsWith(`${carrier.basePath}/`));
    const handling = path.startsWith('/_sandbox/')
      ? handleControl(state, path, params, req, res)
      : served
        ? served.carrier.handle(
            { world: served.world, clock: state.clock, faults: state.faults },
            path,
            req,
            res,
            hanging,
          )
        : handleCarrierRequest(state, baseUrl, path, params, req, res, hanging);
    handling.catch((error: unknown) => {
      logger.warn({ error: error instanceof Error ? error.message : String(error), path }, 'sandbox request failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'sandbox internal error' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  baseUrl = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;

  const tick =
    options.clockMode === 'realtime' ? setInterval(() => state.dispatchDue(), REALTIME_CALLBACK_TICK_MS) : undefined;
  tick?.unref();

  return {
    url: baseUrl,
    port,
    state,
    advance: (ms) => state.moveClockTo(state.clock.now() + ms),
    async stop() {
      if (tick) clearInterval(tick);
      for (const timer of hanging) clearTimeout(timer);
      hanging.clear();
      const senders = state.senders();
      for (const sender of senders) sender.stop();
      await Promise.all(senders.map((sender) => sender.idle()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
