import type { KeyRing } from './key-ring.js';
import { MalformedAnswerFailure } from './lookup-failures.js';

/**
 * A decoded JSON value with every configured key cleared out of its strings and property names; the
 * same value when none held a key. A key spelled with JSON escapes (`\u0041`, `\/`) only shows once
 * decoded, so clearing the text is not enough for an answer that holds escapes.
 */
export function redactDecoded(value: unknown, keys: KeyRing): unknown {
  if (typeof value === 'string') return keys.redact(value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const items = value.map((item) => redactDecoded(item, keys));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  let changed = false;
  const entries = Object.entries(value).map(([name, item]) => {
    const entry = [keys.redact(name), redactDecoded(item, keys)] as const;
    if (entry[0] !== name || entry[1] !== item) changed = true;
    return entry;
  });
  return changed ? Object.fromEntries(entries) : value;
}

/**
 * A JSON answer read with every configured key cleared out of it before anything reads it: its
 * decoded value, and its body as it came when nothing was cleared (else written again from what was
 * left). Throws MalformedAnswerFailure when the body is not JSON.
 */
export function redactedJsonAnswer(received: Buffer, keys: KeyRing): { decoded: unknown; body: Buffer } {
  const receivedText = received.toString('utf8');
  const text = keys.redact(receivedText);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MalformedAnswerFailure(`not JSON (${received.length} bytes)`);
  }
  // Without a backslash the decoded strings are the text's own, already cleared.
  const decoded = text.includes('\\') ? redactDecoded(parsed, keys) : parsed;
  const body =
    decoded !== parsed
      ? Buffer.from(JSON.stringify(decoded))
      : text === receivedText
        ? received
        : Buffer.from(text, 'utf8');
  return { decoded, body };
}
