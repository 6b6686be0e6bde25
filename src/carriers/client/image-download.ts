import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import { diskFaultOf, makeFolder } from '../../errors/disk-fault.js';
import { type ErrorCode, ProductError } from '../../errors/product-error.js';
import { transportFailure } from './lookup-failures.js';

export interface ImageDownloadPolicy {
  /** Where files go; nothing is ever written outside it. */
  readonly dir: string;
  /** Hosts images may come from: `host` (any port) or `host:port`, lower case. */
  readonly allowedHosts: readonly string[];
  /** The largest file accepted, in bytes; a larger one is refused and nothing of it kept. */
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

type ImageRefusalCode = Extract<
  ErrorCode,
  'HOST_NOT_ALLOWED' | 'TOO_LARGE' | 'BAD_URL' | 'HTTP_STATUS' | 'TRANSPORT' | 'UNSAFE_PATH' | NotWrittenCode
>;

/** The codes of an image downloaded but not written: the folder or the disk refused it. */
export type NotWrittenCode = Extract<ErrorCode, 'PATH_NOT_WRITABLE' | 'DISK_FULL'>;

/** Whether the download failed on this side: the file could not be written, which the run counts apart. */
export function isNotWritten(refusal: ImageDownloadRefused): boolean {
  return refusal.code === 'PATH_NOT_WRITABLE' || refusal.code === 'DISK_FULL';
}

/** The refusal of a download the disk did not take, when `error` is a disk fault. */
function notWritten(error: unknown, path: string): ImageDownloadRefused | undefined {
  const fault = diskFaultOf(error, path);
  return fault === undefined ? undefined : new ImageDownloadRefused(fault.code, fault.message);
}

/** Why an image was not downloaded, with a stable code the warehouse keeps in order_images.download_error. */
export class ImageDownloadRefused extends ProductError {
  declare readonly code: ImageRefusalCode;

  constructor(code: ImageRefusalCode, message: string) {
    super(code, message);
  }

  /** `CODE: message`, as stored. */
  get record(): string {
    return `${this.code}: ${this.message}`;
  }
}

const SAFE_EXTENSIONS = new Set(['jpg', 'jpeg', 'png', 'gif', 'webp', 'bmp', 'tif', 'tiff', 'heic', 'pdf']);
const UNSAFE_NAME_CHARACTERS = /[^A-Za-z0-9_-]/g;
const LONGEST_CODE_IN_NAME = 40;

/**
 * The file name of an image: the order code with anything but letters, digits, `_` and `-` made `_`
 * (so no `/`, `\`, `..` or NUL survives), its number, and the URL's extension when it is a known image
 * type (else `bin`). Neither the code nor the URL can choose where the file goes.
 */
export function imageFileName(orderCode: string, no: number, imageUrl: string): string {
  const code = orderCode.replace(UNSAFE_NAME_CHARACTERS, '_').slice(0, LONGEST_CODE_IN_NAME) || 'order';
  let extension = 'bin';
  try {
    const fromUrl = extname(new URL(imageUrl).pathname).slice(1).toLowerCase();
    if (SAFE_EXTENSIONS.has(fromUrl)) extension = fromUrl;
  } catch {
    // Not a URL: the download refuses it; the name still needs no extension from it.
  }
  return `${code}-${Number.isSafeInteger(no) ? Math.abs(no) : 0}.${extension}`;
}

/** The absolute path of `name` inside `dir`; refuses any name that would resolve outside it. */
export function pathInside(dir: string, name: string): string {
  const root = resolve(dir);
  const path = resolve(root, name);
  if (!path.startsWith(root + sep))
    throw new ImageDownloadRefused('UNSAFE_PATH', `file name ${JSON.stringify(name)} leaves the download folder`);
  return path;
}

/** Whether the URL's host is on the allow-list (`host` matches any port, `host:port` only that port). */
export function isHostAllowed(url: URL, allowedHosts: readonly string[]): boolean {
  const hostname = url.hostname.toLowerCase();
  const host = url.host.toLowerCase();
  return allowedHosts.some((allowed) => allowed === host || allowed === hostname);
}

/** Counts bytes through a stream and fails it as soon as they pass the cap. */
function sizeCap(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > maxBytes) callback(new ImageDownloadRefused('TOO_LARGE', `the file is over ${maxBytes} bytes`));
      else callback(null, chunk);
    },
  });
}

/**
 * Downloads one image into the policy's folder under its safe name, returning the path written. Only
 * from an allowed host over http(s), no redirects followed, the size capped (a Content-Length over the
 * cap is refused before reading; a body passing it is aborted), written to a temporary name and renamed
 * when whole, so a refused or broken download leaves no file.
 */
export async function downloadImage(
  policy: ImageDownloadPolicy,
  orderCode: string,
  no: number,
  imageUrl: string,
): Promise<string> {
  let url: URL;
  try {
    url = new URL(imageUrl);
  } catch {
    throw new ImageDownloadRefused('BAD_URL', 'the image link is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ImageDownloadRefused('BAD_URL', `the image link is not http(s): ${url.protocol}`);
  if (!isHostAllowed(url, policy.allowedHosts))
    throw new ImageDownloadRefused('HOST_NOT_ALLOWED', `host ${url.host} is not on the allow-list`);
  const name = imageFileName(orderCode, no, imageUrl);
  const path = pathInside(policy.dir, name);
  const partial = pathInside(policy.dir, `.${name}.part`);
  try {
    await makeFolder(resolve(policy.dir));
  } catch (error) {
    throw notWritten(error, resolve(policy.dir)) ?? error;
  }
  let answer: Awaited<ReturnType<typeof request>>;
  try {
    // undici's request follows no redirect: a 3xx is refused like any other non-2xx answer.
    answer = await request(url, { method: 'GET', headersTimeout: policy.timeoutMs, bodyTimeout: policy.timeoutMs });
  } catch (error) {
    throw new ImageDownloadRefused('TRANSPORT', transportFailure(error, policy.timeoutMs).message);
  }
  if (answer.statusCode < 200 || answer.statusCode >= 300) {
    await answer.body.dump();
    throw new ImageDownloadRefused('HTTP_STATUS', `the image host answered HTTP ${answer.statusCode}`);
  }
  const length = Number(answer.headers['content-length']);
  if (Number.isFinite(length) && length > policy.maxBytes) {
    // Destroying the body emits its abort as an error; nothing waits for it.
    answer.body.on('error', () => {});
    answer.body.destroy();
    throw new ImageDownloadRefused('TOO_LARGE', `the file is ${length} bytes, over ${policy.maxBytes}`);
  }
  try {
    await pipeline(answer.body, sizeCap(policy.maxBytes), createWriteStream(partial));
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    if (error instanceof ImageDownloadRefused) throw error;
    throw (
      notWritten(error, partial) ??
      new ImageDownloadRefused('TRANSPORT', transportFailure(error, policy.timeoutMs).message)
    );
  }
  return path;
}
