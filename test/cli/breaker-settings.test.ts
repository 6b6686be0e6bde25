import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BREAKER_ATTEMPTS } from '../../src/pipeline/carrier-breaker-attempts.js';
import { parseConfig } from '../../src/settings/config-file.js';
import { jobSettingsFrom } from '../support/job-settings.js';

const ENV = {
  PARCEL_RECON_API_KEYS: 'default=ak-0f3b9d27-6c41-4e8a-b5d2-7a1e9c3f0b64',
  PARCEL_RECON_TRACKING_URL: 'http://127.0.0.1:9',
};
const logger = pino({ level: 'silent' });
const source = { inputs: ['orders.csv'] };

describe("the tracking step's circuit breaker", () => {
  it('trips after track.breakerAttempts attempts in a row without an answer', async () => {
    const settings = jobSettingsFrom({ source, track: { breakerAttempts: 7 } }, ENV, logger);
    expect((await settings.tracking()).breakerAttempts).toBe(7);
  });

  it('trips after 50 when the configuration says nothing', async () => {
    const settings = jobSettingsFrom({ source }, ENV, logger);
    expect(DEFAULT_BREAKER_ATTEMPTS).toBe(50);
    expect((await settings.tracking()).breakerAttempts).toBe(DEFAULT_BREAKER_ATTEMPTS);
  });

  it('refuses a count that is not a positive whole number, naming the key', () => {
    expect(() => parseConfig({ track: { breakerAttempts: 0 } }, 'x.json')).toThrow(/track\.breakerAttempts/);
  });
});
