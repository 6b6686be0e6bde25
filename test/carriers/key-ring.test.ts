import { describe, expect, it } from 'vitest';
import { redactDecoded } from '../../src/carriers/client/key-redaction.js';
import { KeyRing } from '../../src/carriers/client/key-ring.js';

const SHORT = 'kr-41c7e0b2';
const LONG = `${SHORT}-9d3a-4f86`;
const keys = new KeyRing([
  ['short', SHORT],
  ['long', LONG],
]);

describe('KeyRing.redact', () => {
  it('replaces every key, the longer first so that no part of one is left', () => {
    expect(keys.redact(`a ${LONG} b ${SHORT} c ${LONG}`)).toBe('a [redacted] b [redacted] c [redacted]');
  });

  it('hands back the same text when it holds no key', () => {
    const text = 'Không tìm thấy';
    expect(keys.redact(text)).toBe(text);
  });
});

describe('redactDecoded', () => {
  it('clears keys out of strings and property names at every depth, and keeps a value with none as it is', () => {
    const clean = { a: [1, 'x', { b: null }] };
    expect(redactDecoded(clean, keys)).toBe(clean);
    expect(redactDecoded({ [SHORT]: [{ note: `key ${LONG}` }, 3] }, keys)).toEqual({
      '[redacted]': [{ note: 'key [redacted]' }, 3],
    });
  });
});
