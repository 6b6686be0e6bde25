const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/**
 * An answer's body as the contract read it. JSON.parse keeps the last value of a key given twice,
 * while DuckDB's json_transform, which loads the body into the warehouse, keeps the first: a body that
 * repeats a key is written again from its decoded value, so that the warehouse holds what the
 * contract checked. The carrier names each key once, so this is rare, and the check is a count: each
 * key in the text ends with a colon outside strings, and a repeat makes the text hold more keys than
 * the decoded value.
 */
export function answerBodyAsRead(body: Buffer, decoded: unknown): Buffer {
  return keysInText(body) === keysInValue(decoded) ? body : Buffer.from(JSON.stringify(decoded));
}

/** The keys of a JSON text at every depth, repeats included: its colons outside strings. */
function keysInText(text: Buffer): number {
  let keys = 0;
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (byte === COLON) keys++;
    else if (byte === QUOTE) {
      // To the closing quote: an escape's next byte is never one.
      for (i++; i < text.length && text[i] !== QUOTE; i++) if (text[i] === BACKSLASH) i++;
    }
  }
  return keys;
}

/** The keys of a decoded JSON value at every depth. */
function keysInValue(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let keys = 0;
  if (Array.isArray(value)) {
    for (const item of value) keys += keysInValue(item);
    return keys;
  }
  for (const key in value) keys += 1 + keysInValue((value as Record<string, unknown>)[key]);
  return keys;
}
