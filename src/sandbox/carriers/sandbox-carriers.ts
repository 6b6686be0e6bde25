import { GHN_SANDBOX } from './ghn/sandbox-carrier.js';
import type { SandboxCarrier } from './sandbox-carrier.js';

/** Every carrier the sandbox serves beside 247Express: one line per carrier. */
export const SANDBOX_CARRIERS: readonly SandboxCarrier[] = [GHN_SANDBOX];
