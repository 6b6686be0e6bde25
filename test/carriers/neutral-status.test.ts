import { describe, expect, it } from 'vitest';
import { neutralStatusOf } from '../../src/carriers/carrier-definition.js';
import { DEFAULT_CARRIER_ID, findCarrier, KNOWN_CARRIERS } from '../../src/carriers/known-carriers.js';
import { NEUTRAL_STATUSES, type NeutralStatus } from '../../src/carriers/neutral-status.js';

/** Neutral statuses after which nothing more happens to a parcel. */
const FINAL: readonly NeutralStatus[] = ['returned', 'delivered', 'cancelled', 'lost_or_damaged'];

describe('the neutral status set', () => {
  it.each(KNOWN_CARRIERS.map((carrier) => [carrier.id, carrier] as const))(
    "%s: each status maps to a neutral one, final exactly when the carrier's status is terminal",
    (_id, carrier) => {
      expect(new Set(carrier.statuses.map((s) => s.code)).size).toBe(carrier.statuses.length);
      for (const status of carrier.statuses) {
        expect(NEUTRAL_STATUSES).toContain(status.neutral);
        expect(FINAL.includes(status.neutral), `${status.code} ${status.name}`).toBe(status.terminal);
      }
      expect(neutralStatusOf(carrier, 'no-such-code')).toBe('unknown');
    },
  );

  it("names 247Express's statuses by their meaning", () => {
    const express = findCarrier(DEFAULT_CARRIER_ID)!;
    const neutral = (code: string) => neutralStatusOf(express, code);
    expect([neutral('21'), neutral('25'), neutral('30'), neutral('16'), neutral('27'), neutral('28')]).toEqual([
      'pending',
      'out_for_delivery',
      'delivered',
      'delivery_failed',
      'returning',
      'returned',
    ]);
    expect(findCarrier('nobody')).toBeUndefined();
  });
});

describe("a carrier's error codes", () => {
  it.each(KNOWN_CARRIERS.map((carrier) => [carrier.id, carrier] as const))(
    '%s: the codes saying it knows no such order settle the order, and name no other carrier',
    (_id, carrier) => {
      expect(carrier.unknownOrderErrorCodes.length).toBeGreaterThan(0);
      for (const code of carrier.unknownOrderErrorCodes) {
        expect(carrier.settlingErrorCodes).toContain(code);
        for (const other of KNOWN_CARRIERS.filter((known) => known.id !== carrier.id))
          expect(other.settlingErrorCodes).not.toContain(code);
      }
    },
  );
});
