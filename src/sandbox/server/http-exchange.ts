import type { IncomingMessage, ServerResponse } from 'node:http';

export const MAX_BODY_BYTES = 1_048_576;

export class BodyTooLargeError extends Error {
  constructor() {
    super(`request body over ${MAX_BODY_BYTES} bytes`);
  }
}

/** Reads a request body as UTF-8 text, refusing more than MAX_BODY_BYTES. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendText(res, status, JSON.stringify(body), JSON_CONTENT_TYPE, headers);
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string | Buffer,
  contentType: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A query parameter by name, ignoring the name's case (the carrier's example writes `apikey` for `apiKey`). */
export function queryParam(params: URLSearchParams, name: string): string | undefined {
  const direct = params.get(name);
  if (direct !== null) return direct;
  const lower = name.toLowerCase();
  for (const [key, value] of params) if (key.toLowerCase() === lower) return value;
  return undefined;
}
