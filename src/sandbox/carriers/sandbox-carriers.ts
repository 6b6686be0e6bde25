import { EXPRESS_247 } from '../../carriers/247express/carrier.js';
import { KNOWN_CARRIERS } from '../../carriers/known-carriers.js';
import type { SandboxCarrier } from './sandbox-carrier.js';

/**
 * A known carrier's sandbox: its folder here, `<id>/sandbox-carrier.ts`, exporting `SANDBOX_CARRIER`.
 * Found by the carrier's id, so that a carrier's one registration line, in known-carriers.ts, brings its
 * sandbox too.
 */
export async function sandboxCarrierOf(carrierId: string): Promise<SandboxCarrier> {
  // A specifier in a variable: the test runner rewrites a template literal's import into a search of its own.
  const specifier = `./${carrierId}/sandbox-carrier.js`;
  const declared: { SANDBOX_CARRIER?: SandboxCarrier } = await import(specifier).catch((error: unknown) => {
    if (isModuleNotFound(error)) return {};
    throw error;
  });
  if (declared.SANDBOX_CARRIER?.id !== carrierId)
    throw new Error(
      `the sandbox serves no carrier ${carrierId}: src/sandbox/carriers/${carrierId}/sandbox-carrier.ts must export its SANDBOX_CARRIER`,
    );
  return declared.SANDBOX_CARRIER;
}

function isModuleNotFound(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  // Node says ERR_MODULE_NOT_FOUND; the test runner's loader only says so in its message.
  return (
    code === 'ERR_MODULE_NOT_FOUND' ||
    (typeof message === 'string' && /Cannot find module|Failed to load/.test(message))
  );
}

/** Every carrier the sandbox serves beside 247Express, which it serves at its root. */
export const SANDBOX_CARRIERS: readonly SandboxCarrier[] = await Promise.all(
  KNOWN_CARRIERS.filter((carrier) => carrier.id !== EXPRESS_247.id).map((carrier) => sandboxCarrierOf(carrier.id)),
);
