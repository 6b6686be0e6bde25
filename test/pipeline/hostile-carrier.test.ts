/**
 * The built command line against a carrier on loopback that behaves badly on purpose: answers of
 * 64 MB must not take the host's memory, and a key the carrier quotes back must be found nowhere.
 */

import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPERATION_PATHS } from '../../src/carriers/247express/contract.js';
import { CLI, type CliResult, cli } from '../support/cli-process.js';
import { PRICE_REQUEST_CSV_HEADER } from '../support/customer-operations.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';

const KEY = 'hk-7c1e9b3d-58a2-4f06-9d4b-2e8a6c0f1b57';
const OTHER_KEY = 'hk-2f6a0d8e-93c1-4b75-a8e2-6d1f4b9c3a08';
// Orders without an account go to `default`.
const ENV = { PARCEL_RECON_API_KEYS: `default=${KEY},saigon-shop=${OTHER_KEY}` };
const CODES = Array.from({ length: 8 }, (_, i) => `247EXP${String(i + 1).padStart(4, '0')}`);
const ANSWER_BYTES = 64 * 1024 * 1024;

let server: Server | undefined;
let workspace: TrackingWorkspace;

beforeEach(async () => {
  workspace = await trackingWorkspace();
});

afterEach(async () => {
  server?.closeAllConnections();
  if (server) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
  await workspace.dispose();
});

async function carrier(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer(answer);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const codesCsv = () =>
  workspace.writeCsv('orders.csv', [['order_code', 'account'], ...CODES.map((c) => [c, 'default'])]);

describe('a carrier answering 64 MB bodies', () => {
  it('keeps `track` of 8 codes under 300 MB and records LOOKUP_TOO_LARGE for each order', async () => {
    let requests = 0;
    let written = 0;
    // Streamed a chunk at a time as the client reads, so the server holds none of it; every other
    // answer declares its length, the rest are chunked and must be counted.
    const url = await carrier((_request, response) => {
      const declared = requests++ % 2 === 0;
      response.writeHead(200, {
        'content-type': 'application/json',
        ...(declared ? { 'content-length': String(ANSWER_BYTES) } : {}),
      });
      response.on('error', () => {});
      const chunk = Buffer.alloc(256 * 1024, 0x61);
      let sent = 0;
      response.write('{"x":"');
      const more = () => {
        while (sent < ANSWER_BYTES - 8 && !response.destroyed) {
          const piece = chunk.subarray(0, Math.min(chunk.length, ANSWER_BYTES - 8 - sent));
          sent += piece.length;
          written += piece.length;
          if (!response.write(piece)) return void response.once('drain', more);
        }
        response.end('"}');
      };
      more();
    });
    const input = await codesCsv();

    const result = await new Promise<CliResult>((resolve) =>
      execFile(
        '/usr/bin/time',
        ['-v', process.execPath, CLI, 'track', '--input', input, '--db', workspace.dbPath, '--tracking-url', url],
        { env: { PATH: process.env.PATH ?? '', ...ENV }, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
        (error, stdout, stderr) => resolve({ code: (error as { code?: number } | null)?.code ?? 0, stdout, stderr }),
      ),
    );

    const peakKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)?.[1]);
    expect(peakKb, result.stderr).toBeGreaterThan(0);
    expect(peakKb / 1024).toBeLessThan(300);
    expect(result.code, result.stderr).toBe(1);
    expect(requests).toBe(CODES.length);
    expect(written).toBeLessThan((CODES.length * ANSWER_BYTES) / 4);
    const rows = await workspace.query<{ order_code: string; outcome: string; error_code: string }>(
      'SELECT order_code, outcome, error_code FROM lookup_results ORDER BY order_code',
    );
    expect(rows).toEqual(
      CODES.map((code) => ({ order_code: code, outcome: 'transport_error', error_code: 'LOOKUP_TOO_LARGE' })),
    );
    expect(result.stdout).toContain('LOOKUP_TOO_LARGE');
  });
});

/** Every file under a folder, gzip files as their text. */
async function filesText(dir: string): Promise<{ path: string; text: string }[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return Promise.all(
    entries
      .filter((e) => e.isFile())
      .map(async (e) => {
        const path = join(e.parentPath, e.name);
        const bytes = await readFile(path);
        return { path, text: (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('latin1') };
      }),
  );
}

/** The text of every row of every table in the warehouse. */
async function warehouseText(): Promise<string> {
  const tables = await workspace.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'",
  );
  const texts: unknown[] = [];
  for (const table of tables) texts.push(await workspace.query(`SELECT * FROM "${table.table_name}"`));
  return JSON.stringify(texts);
}

/** `\u0068\u006b...`: the key as JSON may spell it, which only shows once decoded. */
const escaped = (key: string) => [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

describe('a carrier quoting the API key back', () => {
  it('gets the key into no table, file, output or log', async () => {
    const url = await carrier((request, response) => {
      const target = new URL(request.url ?? '/', 'http://carrier');
      const key = target.searchParams.get('apiKey') ?? String(request.headers.apikey);
      const json = (body: string) => response.writeHead(200, { 'content-type': 'application/json' }).end(body);
      if (target.pathname === OPERATION_PATHS.tracking) {
        const code = target.searchParams.get('ordercode') ?? '';
        // Each order meets the key in another place: a refusal, an EXCEPTION, an escaped spelling, a
        // malformed answer whose checker quotes what it found.
        const n = CODES.indexOf(code) % 4;
        if (n === 0)
          return json(
            JSON.stringify({
              errorCode: 'ORDERCODE_NOT_FOUND',
              errorMessage: `Apikey ${key} cannot see ${code}`,
              orderCode: code,
            }),
          );
        if (n === 1)
          return json(
            JSON.stringify({ errorCode: 'EXCEPTION', errorMessage: `Apikey ${key} failed`, orderCode: code }),
          );
        if (n === 2)
          return json(
            `{"errorCode":"ORDERCODE_NOT_FOUND","errorMessage":"Apikey ${escaped(OTHER_KEY)} / ${escaped(key)}","orderCode":"${code}"}`,
          );
        return json(`Apikey ${key} is not valid`);
      }
      if (target.pathname === OPERATION_PATHS.price)
        return json(
          JSON.stringify({
            IsError: true,
            Errors: [{ Field: 'ApiKey', Message: `Apikey ${key} not found` }],
            ErrorMessage: null,
          }),
        );
      return json(
        JSON.stringify({
          Items: null,
          Errors: [{ Code: 'APIKEY_NOT_FOUND', Message: `Apikey ${key} not found` }],
          ErrorMessage: `Apikey ${key} not found`,
        }),
      );
    });
    const common = [
      '--db',
      workspace.dbPath,
      '--retry-min-ms',
      '1',
      '--retry-max-ms',
      '5',
      '--attempts',
      '2',
      '--log-level',
      'debug',
    ];
    const input = await codesCsv();
    const requests = await workspace.writeCsv('requests.csv', [
      [...PRICE_REQUEST_CSV_HEADER],
      ...CODES.slice(0, 2).map((code) => [
        'Hà Nội',
        'Ba Đình',
        'Phúc Xá',
        '10',
        '10',
        '10',
        '500',
        '1',
        '2',
        code,
        'default',
      ]),
    ]);
    const runs = [
      await cli(['track', '--input', input, '--tracking-url', url, ...common], ENV),
      await cli(['track', '--input', input, '--tracking-url', url, '--json', ...common], ENV),
      await cli(['price', '--input', requests, '--base-url', url, ...common], ENV),
      await cli(['price', '--input', requests, '--base-url', url, '--json', ...common], ENV),
      await cli(['images', '--codes', CODES.join(','), '--base-url', url, ...common], ENV),
      await cli(['images', '--codes', CODES.join(','), '--base-url', url, '--json', ...common], ENV),
      await cli(['report', 'failures', '--db', workspace.dbPath, '--out', join(workspace.dir, 'reports')], {}),
    ];

    expect(JSON.parse(runs[3]!.stdout)).toMatchObject({ carrierErrors: 2 });
    expect(JSON.parse(runs[5]!.stdout)).toMatchObject({ carrierErrors: CODES.length });
    const rows = await workspace.query<{ error_message: string }>(
      'SELECT error_message FROM lookup_results WHERE error_message IS NOT NULL',
    );
    expect(rows.map((r) => r.error_message).join('\n')).toContain('Apikey [redacted]');
    const places = [
      ...runs.flatMap((run, i) => [
        { path: `stdout of command ${i}`, text: run.stdout },
        { path: `stderr of command ${i}`, text: run.stderr },
      ]),
      { path: 'the warehouse tables', text: await warehouseText() },
      ...(await filesText(workspace.dir)),
    ];
    for (const key of [KEY, OTHER_KEY])
      expect(places.filter((place) => place.text.includes(key)).map((place) => place.path)).toEqual([]);
  });
});
