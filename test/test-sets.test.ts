import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { END_TO_END_TESTS } from '../vitest.config.js';

const ROOT = join(import.meta.dirname, '..');

/**
 * What makes a test file end-to-end: importing the helpers that start the built CLI, PostgreSQL,
 * MariaDB or Redis, or playwright-core (Chromium); or naming a file under dist/ or bin/.
 */
const NEEDS_BUILD_OR_SERVER =
  /from '[^']*(support\/(cli-process|callback-receiver-process|postgres-server|mariadb-server|redis-server)\.js|playwright-core)'|'\.\.\/\.\.\/(dist|bin)\//;

async function testFiles(): Promise<string[]> {
  const entries = await readdir(join(ROOT, 'test'), { recursive: true });
  return entries
    .filter((entry) => entry.endsWith('.test.ts'))
    .map((entry) => `test/${entry}`)
    .sort();
}

describe('the fast and end-to-end test sets', () => {
  it('lists only test files that exist as end-to-end', async () => {
    for (const file of END_TO_END_TESTS) await expect(access(join(ROOT, file))).resolves.toBeUndefined();
  });

  it('leaves in the fast set no file that needs the built CLI or a server', async () => {
    const endToEnd = new Set(END_TO_END_TESTS);
    const needing: string[] = [];
    for (const file of await testFiles()) {
      if (endToEnd.has(file)) continue;
      if (NEEDS_BUILD_OR_SERVER.test(await readFile(join(ROOT, file), 'utf8'))) needing.push(file);
    }
    expect(needing).toEqual([]);
  });
});
