/**
 * JSON text held as the bytes of its UTF-8 encoding, one character per byte (Node's 'latin1'
 * encoding). The sandbox's answers are mostly Vietnamese names: as ordinary strings they are
 * two-byte text that JSON.stringify writes slowly and that must be encoded to UTF-8 again for each
 * answer; as bytes they are built by concatenating names encoded once, and copied into a Buffer as
 * they are.
 */
export type JsonBytes = string & { readonly __brand: 'JsonBytes' };

/** Text that JSON writes as it is between quotes: printable ASCII but `"` and `\`. */
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Encoded strings that need more than quotes: names and notes from the sandbox's fixed tables. */
const encodedStrings = new Map<string, JsonBytes>();
const ENCODED_STRINGS_LIMIT = 10_000;

/** A string as JSON (quoted, escaped), in bytes. */
export function jsonString(value: string): JsonBytes {
  if (VERBATIM.test(value)) return `"${value}"` as JsonBytes;
  let bytes = encodedStrings.get(value);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(value), 'utf8').toString('latin1') as JsonBytes;
    if (encodedStrings.size >= ENCODED_STRINGS_LIMIT) encodedStrings.clear();
    encodedStrings.set(value, bytes);
  }
  return bytes;
}

/** A number as JSON.stringify writes it, in bytes. */
export function jsonNumber(value: number): JsonBytes {
  return (Number.isFinite(value) ? String(value) : 'null') as JsonBytes;
}

/** A string or null as JSON, in bytes. */
export function jsonNullableString(value: string | null): JsonBytes {
  return value === null ? ('null' as JsonBytes) : jsonString(value);
}
