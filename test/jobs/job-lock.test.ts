/** The job lock on a real folder: of many starting together, one takes it and the others see who holds it. */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireJobLock, JobLockHeldError } from '../../jobs/job-lock.js';

const ZONE = 'Asia/Ho_Chi_Minh';
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-job-lock-'));
  dirs.push(dir);
  return dir;
}

describe('the job lock', () => {
  it('is taken by one of many at once; the others are refused naming its holder', async () => {
    for (let round = 0; round < 20; round++) {
      const dir = await tempDir();
      const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => acquireJobLock(dir, 'nightly', ZONE)));
      const taken = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(taken).toHaveLength(1);
      for (const outcome of outcomes)
        if (outcome.status === 'rejected') {
          expect(outcome.reason).toBeInstanceOf(JobLockHeldError);
          expect((outcome.reason as JobLockHeldError).message).toContain(`PID ${process.pid} `);
        }
      await (taken[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireJobLock>>>).value.release();
      expect(await readdir(dir)).toEqual([]);
    }
  });
});
