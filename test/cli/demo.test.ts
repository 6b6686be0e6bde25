/**
 * `demo` tracks the sample CSVs of both carriers through the in-process sandbox into one warehouse,
 * and every report over it shows both carriers' orders.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../support/cli-process.js';

const PARTNER_SAMPLE = new URL('../../data/samples/partner-orders.csv', import.meta.url).pathname;

describe('demo with both carriers', () => {
  let dir: string;
  let db: string;
  let demo: Awaited<ReturnType<typeof cli>>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parcel-recon-demo-'));
    db = join(dir, 'demo.duckdb');
    demo = await cli(['demo', '--db', db], {});
  }, 120_000);

  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** The carriers of the rows of a report's table, written as JSON. */
  async function carriersOf(report: string[], table: string): Promise<string[]> {
    const result = await cli(['report', ...report, '--db', db, '--format', 'json', '--out', dir, '--json'], {});
    expect(result.code, result.stderr).toBe(0);
    const files = (JSON.parse(result.stdout) as { files: { table: string; path: string }[] }).files;
    const rows = JSON.parse(await readFile(files.find((f) => f.table === table)!.path, 'utf8')) as {
      carrier: string | null;
    }[];
    return [...new Set(rows.map((row) => row.carrier).filter((carrier) => carrier !== null))].sort();
  }

  it("tracks 247Express's and GHN's sample orders into one warehouse", async () => {
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/247Express:\nrun demo-.*: ok/);
    expect(demo.stdout).toMatch(/GHN:\nrun demo-ghn-.*: ok/);
    const counts = await cli(
      [
        'sql',
        '--db',
        db,
        '--format',
        'json',
        'SELECT carrier, count(*) AS n FROM orders GROUP BY carrier ORDER BY carrier',
      ],
      {},
    );
    expect(JSON.parse(counts.stdout)).toEqual([
      { carrier: '247express', n: '180' },
      { carrier: 'ghn', n: '60' },
    ]);
  });

  it('shows both carriers in every report', async () => {
    const both = ['247express', 'ghn'];
    expect(await carriersOf(['charges'], 'charges')).toEqual(both);
    expect(await carriersOf(['failures'], 'failures')).toEqual(both);
    expect(await carriersOf(['reconcile', '--partner', PARTNER_SAMPLE], 'reconcile')).toEqual(both);
    expect(await carriersOf(['cod'], 'cod')).toEqual(both);
    const page = join(dir, 'page.html');
    const html = await cli(['report', 'html', '--db', db, '--out', page], {});
    expect(html.code, html.stderr).toBe(0);
    const text = await readFile(page, 'utf8');
    for (const carrier of both) expect(text).toContain(carrier);
  });

  it("gives the page's COD section the configuration's rules", async () => {
    const codFindings = async (args: string[]) => {
      const page = join(dir, `cod-${args.length}.html`);
      const result = await cli(['report', 'html', '--db', db, '--out', page, ...args], {});
      expect(result.code, result.stderr).toBe(0);
      const text = (await readFile(page, 'utf8')).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
      return Number(/COD findings ([\d,]+)/.exec(text)![1]!.replaceAll(',', ''));
    };
    expect(await codFindings([])).toBeGreaterThan(0);
    const config = join(dir, 'patient.config.json');
    await writeFile(config, JSON.stringify({ cod: { unpaidAfterDays: 9999 } }));
    // Nothing is overdue when the shop allows the carriers 9999 days to pay.
    expect(await codFindings(['--config', config])).toBe(0);
  });
});
