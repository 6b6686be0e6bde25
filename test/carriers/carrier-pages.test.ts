/** Each carrier's page in docs/carriers/ holds its status table as the code declares it. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { KNOWN_CARRIERS } from '../../src/carriers/known-carriers.js';
import { NEUTRAL_STATUS_MEANINGS, NEUTRAL_STATUSES } from '../../src/carriers/neutral-status.js';

const page = (name: string) => readFile(new URL(`../../docs/carriers/${name}`, import.meta.url), 'utf8');

/** The cells of each row of the markdown tables in a page. */
function rowsOf(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !line.startsWith('|---') && !line.startsWith('| -'))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

describe('the carriers pages', () => {
  it.each(KNOWN_CARRIERS.map((carrier) => [carrier.id, carrier] as const))(
    '%s: its page lists each status with its neutral status and whether it is terminal',
    async (id, carrier) => {
      const rows = rowsOf(await page(`${id}.md`));
      for (const status of carrier.statuses) {
        const row = rows.find((cells) => cells[0] === status.code && cells[1] === status.name);
        expect(row?.slice(2, 4), status.code).toEqual([`\`${status.neutral}\``, status.terminal ? 'yes' : 'no']);
      }
    },
  );

  it('the index lists the neutral statuses with their meanings', async () => {
    const rows = rowsOf(await page('README.md'));
    for (const status of NEUTRAL_STATUSES)
      expect(rows.find((row) => row[0] === `\`${status}\``)?.[1], status).toBe(NEUTRAL_STATUS_MEANINGS[status]);
  });
});
