import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextFireTime, runSchedule, type SchedulerClock } from '../../jobs/job-scheduler.js';
import { startCli } from '../support/cli-process.js';

/** A clock whose sleeps move its time at once, recording each wait. */
function steppedClock(startIso: string): SchedulerClock & { waits: number[] } {
  let now = Date.parse(startIso);
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  };
}

describe('the job scheduler', () => {
  it('reads cron expressions in UTC+07:00', () => {
    // 02:00 in Hanoi is 19:00 UTC the day before.
    expect(new Date(nextFireTime('0 2 * * *', 420, Date.parse('2026-11-22T18:30:00Z'))!).toISOString()).toBe(
      '2026-11-22T19:00:00.000Z',
    );
    expect(new Date(nextFireTime('0 2 * * *', 420, Date.parse('2026-11-22T19:00:00Z'))!).toISOString()).toBe(
      '2026-11-23T19:00:00.000Z',
    );
    // Mondays at 06:15 Hanoi time; 2026-11-23 is a Monday.
    expect(new Date(nextFireTime('15 6 * * 1', 420, Date.parse('2026-11-22T12:00:00Z'))!).toISOString()).toBe(
      '2026-11-22T23:15:00.000Z',
    );
    expect(new Date(nextFireTime('0 2 * * *', 0, Date.parse('2026-11-22T18:30:00Z'))!).toISOString()).toBe(
      '2026-11-23T02:00:00.000Z',
    );
  });

  it('fires each job at its cron time on a controlled clock, and jobs due together one after the other', async () => {
    const clock = steppedClock('2026-11-22T18:00:00Z');
    const fired: { job: string; at: string; clockAt: string }[] = [];
    const firings = await runSchedule({
      jobs: [
        { job: 'nightly', schedule: '0 2 * * *' },
        { job: 'finance-audit', schedule: '0 2 * * 1' },
      ],
      utcOffsetMinutes: 420,
      clock,
      stop: new AbortController().signal,
      maxFirings: 4,
      fire: async (job, at) => {
        fired.push({ job, at: new Date(at).toISOString(), clockAt: new Date(clock.now()).toISOString() });
      },
    });
    expect(firings).toBe(4);
    expect(fired).toEqual([
      { job: 'nightly', at: '2026-11-22T19:00:00.000Z', clockAt: '2026-11-22T19:00:00.000Z' },
      { job: 'finance-audit', at: '2026-11-22T19:00:00.000Z', clockAt: '2026-11-22T19:00:00.000Z' },
      { job: 'nightly', at: '2026-11-23T19:00:00.000Z', clockAt: '2026-11-23T19:00:00.000Z' },
      { job: 'nightly', at: '2026-11-24T19:00:00.000Z', clockAt: '2026-11-24T19:00:00.000Z' },
    ]);
    // It never sleeps longer than a minute at a time, so a clock jump is noticed.
    expect(Math.max(...clock.waits)).toBeLessThanOrEqual(60_000);
  });

  it('skips slots missed while a job ran instead of firing them late', async () => {
    const clock = steppedClock('2026-11-22T18:59:00Z');
    const fired: string[] = [];
    await runSchedule({
      jobs: [{ job: 'nightly', schedule: '*/10 * * * *' }],
      utcOffsetMinutes: 420,
      clock,
      stop: new AbortController().signal,
      maxFirings: 2,
      fire: async (_job, at) => {
        fired.push(new Date(at).toISOString());
        // This run takes 25 minutes: the 19:10 and 19:20 slots pass meanwhile.
        await clock.sleep(25 * 60_000, new AbortController().signal);
      },
    });
    expect(fired).toEqual(['2026-11-22T19:00:00.000Z', '2026-11-22T19:30:00.000Z']);
  });

  it('`parcel-recon schedule` fires the nightly job at its time in UTC+07:00, on the pretended clock', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parcel-recon-schedule-'));
    try {
      const config = join(dir, 'parcel-recon.config.json');
      // No source configured: the job runs, fails in its tracking step with one clear line, and writes its summary.
      await writeFile(
        config,
        JSON.stringify({ warehouse: join(dir, 'recon.duckdb'), jobs: { nightly: { schedule: '0 2 * * *' } } }),
      );
      const started = Date.now();
      const scheduler = await startCli(['schedule', '--config', config, '--max-runs', '1'], {
        PARCEL_RECON_NOW: '2026-11-23T01:59:58+07:00',
      }).ended;
      expect(scheduler.code).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
      const lines = scheduler.stderr
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.find((l) => l.msg === 'job planned')).toMatchObject({
        job: 'nightly',
        at: '2026-11-23T02:00:00+07:00',
      });
      expect(lines.find((l) => l.msg === 'job firing')).toMatchObject({
        job: 'nightly',
        scheduledAt: '2026-11-23T02:00:00+07:00',
      });
      const files = await readdir(join(dir, 'jobs', 'nightly'));
      expect(files).toHaveLength(1);
      const summary = JSON.parse(await readFile(join(dir, 'jobs', 'nightly', files[0]!), 'utf8')) as {
        exitState: string;
        error: string;
        carrierDay: string;
      };
      expect(summary).toMatchObject({ exitState: 'failed', carrierDay: '2026-11-23' });
      expect(summary.error).toMatch(/the configuration has no source/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
