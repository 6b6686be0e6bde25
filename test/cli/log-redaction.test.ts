import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACTED_PATHS } from '../../src/cli/logger.js';

/** The lines a logger with the product's redaction writes for `fields`. */
function loggedLine(fields: object): string {
  let written = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      written += String(chunk);
      done();
    },
  });
  pino({ redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink).info(fields, 'a line');
  return written;
}

describe('log redaction', () => {
  it("blanks each carrier's credential field, at the top and one level down, and keeps the rest", () => {
    const secrets = ['247-api-key', 'ghn-token-a', 'ghn-token-b', 'ghn-header-token', 'nested-apikey', 'nested-Token'];
    const line = loggedLine({
      ApiKey: secrets[0],
      token: secrets[1],
      Token: secrets[2],
      headers: { token: secrets[3] },
      request: { apiKey: secrets[4], Token: secrets[5], alias: 'hanoi-shop' },
    });
    for (const secret of secrets) expect(line).not.toContain(secret);
    expect(line).toContain('hanoi-shop');
    expect(line.match(/\[redacted\]/g)).toHaveLength(secrets.length);
  });
});
