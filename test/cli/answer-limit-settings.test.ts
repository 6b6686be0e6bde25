import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ANSWER_BYTES } from '../../src/carriers/client/answer-size.js';
import { parseConfig } from '../../src/settings/config-file.js';
import { jobSettingsFrom } from '../support/job-settings.js';

const ENV = {
  PARCEL_RECON_API_KEYS: 'default=ak-0f3b9d27-6c41-4e8a-b5d2-7a1e9c3f0b64',
  PARCEL_RECON_TRACKING_URL: 'http://127.0.0.1:9',
  PARCEL_RECON_BASE_URL: 'http://127.0.0.1:9',
};
const logger = pino({ level: 'silent' });

describe('the answer size limit of the jobs', () => {
  it('comes from track.maxAnswerBytes and price.maxAnswerBytes', async () => {
    const settings = jobSettingsFrom(
      { source: { inputs: ['orders.csv'] }, track: { maxAnswerBytes: 4096 }, price: { maxAnswerBytes: 2048 } },
      ENV,
      logger,
    );
    expect((await settings.tracking()).client.maxAnswerBytes).toBe(4096);
    expect((await settings.pricing()).client.maxAnswerBytes).toBe(2048);
  });

  it('is 1 MB when the configuration says nothing', async () => {
    const settings = jobSettingsFrom({ source: { inputs: ['orders.csv'] } }, ENV, logger);
    expect(DEFAULT_MAX_ANSWER_BYTES).toBe(1_048_576);
    expect((await settings.tracking()).client.maxAnswerBytes).toBe(DEFAULT_MAX_ANSWER_BYTES);
    expect((await settings.pricing()).client.maxAnswerBytes).toBe(DEFAULT_MAX_ANSWER_BYTES);
  });

  it('refuses a limit that is not a positive whole number, naming the key', () => {
    expect(() => parseConfig({ track: { maxAnswerBytes: 0 } }, 'x.json')).toThrow(/track\.maxAnswerBytes/);
  });
});
