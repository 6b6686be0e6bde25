import { z } from 'zod';
import {
  CARRIER_UTC_OFFSET_MINUTES,
  DOCUMENTED_LIMITS,
  instantToEpochMs,
  parseCarrierInstant,
} from '../carriers/247express/contract.js';
import type { SandboxCarrier } from './carriers/sandbox-carrier.js';
import { SANDBOX_CARRIERS } from './carriers/sandbox-carriers.js';

const share = z.number().min(0).max(1);
const nonNegativeInt = z.number().int().min(0);

/** A moment given as epoch milliseconds, a date-time text (no offset meaning UTC+07:00) or `now`. */
const instantOption = z.union([z.number(), z.string()]).transform((value, ctx): number => {
  if (typeof value === 'number') return value;
  if (value === 'now') return Math.floor(Date.now() / 1000) * 1000;
  const instant = parseCarrierInstant(value);
  if (instant === undefined) {
    ctx.issues.push({ code: 'custom', message: `not a date-time: ${value}`, input: value });
    return z.NEVER;
  }
  return instantToEpochMs(instant);
});

/** Where a carrier's callbacks go and how hard they are sent (SenderSettings); unset url: none are sent. */
function senderOptions(defaults: { maxAttempts: number; retryBaseMs: number }) {
  return {
    url: z.url({ protocol: /^https?$/ }).optional(),
    maxAttempts: z.number().int().min(1).max(20).default(defaults.maxAttempts),
    retryBaseMs: nonNegativeInt.default(defaults.retryBaseMs),
    timeoutMs: z.number().int().positive().default(5_000),
    concurrency: z.number().int().min(1).max(256).default(8),
    dropRate: share.default(0),
    duplicateRate: share.default(0),
  };
}

const codePrefix = z.string().regex(/^[A-Z]{1,6}$/, 'one to six capital letters');

/** Where a served carrier's webhooks go and how hard they are sent. */
export function webhookSettingsSchema(carrier: SandboxCarrier) {
  return z.object(senderOptions(carrier.webhooks));
}

/** A carrier's section of the options: its world's size and code prefix, and its webhooks. */
function carrierSection(carrier: SandboxCarrier) {
  return z
    .object({
      ordersPerAccount: z.number().int().min(1).max(99_999_999).default(carrier.world.ordersPerAccount),
      codePrefix: codePrefix.default(carrier.world.codePrefix),
      webhooks: webhookSettingsSchema(carrier).prefault({}),
    })
    .strict()
    .prefault({});
}

/** The sandbox's options, with a section for each carrier it serves beside 247Express. */
export function sandboxOptionsSchema(carriers: readonly SandboxCarrier[]) {
  return z.object({
    host: z.string().default('127.0.0.1'),
    /** 0 picks a free port. */
    port: z.number().int().min(0).max(65535).default(0),
    /** The same seed and start give the same accounts, keys and orders. */
    seed: z.number().int().default(1),
    accounts: z.number().int().min(1).max(9).default(3),
    ordersPerAccount: z.number().int().min(1).max(99_999_999).default(500),
    start: instantOption.prefault('2026-11-20T22:00:00+07:00'),
    clockMode: z.enum(['manual', 'realtime']).default('manual'),
    clockSpeed: z.number().positive().default(1),
    historyDays: z.number().min(0).default(10),
    futureDays: z.number().min(0).default(0),
    codePrefix: codePrefix.default('EX'),
    /** The other carriers the sandbox serves (sandbox-carriers.ts), each a section named by its id. */
    carriers: z
      .object(Object.fromEntries(carriers.map((carrier) => [carrier.id, carrierSection(carrier)])))
      .strict()
      .prefault({}),
    lifecycle: z
      .object({
        cancelRate: share.default(0.04),
        lostRate: share.default(0.02),
        confiscatedRate: share.default(0.01),
        failedAttemptRate: share.default(0.3),
        maxAttempts: z.number().int().min(1).max(9).default(3),
        anomalyRate: share.default(0.05),
        noImageRate: share.default(0.1),
      })
      .prefault({}),
    limits: z
      .object({
        perKeyDaily: nonNegativeInt.default(DOCUMENTED_LIMITS.lookupsPerKeyPerDay),
        globalDaily: nonNegativeInt.default(DOCUMENTED_LIMITS.lookupsPerDay),
        dayUtcOffsetMinutes: z.number().int().min(-720).max(840).default(CARRIER_UTC_OFFSET_MINUTES),
      })
      .prefault({}),
    faults: z
      .object({
        latencyMinMs: nonNegativeInt.default(0),
        latencyMaxMs: nonNegativeInt.default(0),
        exceptionRate: share.default(0),
        serverErrorRate: share.default(0),
        resetRate: share.default(0),
        hangRate: share.default(0),
        hangMs: nonNegativeInt.default(30_000),
        malformedRate: share.default(0),
        rateLimitRate: share.default(0),
        retryAfterSeconds: nonNegativeInt.default(1),
      })
      .prefault({}),
    callbacks: z
      .object({
        ...senderOptions({ maxAttempts: 5, retryBaseMs: 500 }),
        auth: z.enum(['apikey', 'basic']).default('apikey'),
        basicUser: z.string().optional(),
        basicPassword: z.string().optional(),
      })
      .prefault({}),
    /** Header that carries the API key on the price and images operations (the spec does not say). */
    customerAuthHeader: z.string().min(1).default('ApiKey'),
    /** Size of each image file the sandbox serves, in bytes. */
    imageBytes: z.number().int().min(4).max(50_000_000).default(4096),
  });
}

export const SandboxOptionsSchema = sandboxOptionsSchema(SANDBOX_CARRIERS);

export type SandboxOptionsInput = z.input<typeof SandboxOptionsSchema>;
export type SandboxOptions = z.output<typeof SandboxOptionsSchema>;
