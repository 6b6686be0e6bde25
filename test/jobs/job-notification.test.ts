import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acquireJobLock } from '../../jobs/job-lock.js';
import type { RunningSandbox } from '../../src/sandbox/sandbox.js';
import { Warehouse } from '../../src/warehouse/warehouse.js';
import { keysOf, startTestSandbox } from '../sandbox/sandbox-http.js';
import { type CliResult, cli as runCli } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { type TrackingWorkspace, trackingWorkspace } from '../support/tracking-harness.js';
import { type ScriptedAnswer, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

interface JobSummary {
  runId: string;
  job: string;
  carrierDay: string;
  exitCode: number;
  exitState: string;
  steps: { step: string; exitState: string; summary: Record<string, unknown> }[];
  summaryFile: string;
  alerts?: Record<string, unknown>[];
}

interface Notification {
  text: string;
  summary: JobSummary;
}

/** The webhook's token, as Slack and Telegram put it in the URL's path. */
const TOKEN = '7741029:AAH-Notify-Secret-Token';

describe('job notifications', () => {
  /** A carrier whose charges all add up, and one with its usual share of billing anomalies. */
  let clean: RunningSandbox;
  let billing: RunningSandbox;
  let workspace: TrackingWorkspace;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    [clean, billing] = await Promise.all([
      startTestSandbox({ ordersPerAccount: 10, lifecycle: { anomalyRate: 0 } }),
      startTestSandbox({ ordersPerAccount: 40, lifecycle: { anomalyRate: 0.5 } }),
    ]);
    workspace = await trackingWorkspace();
  });

  afterAll(async () => {
    await Promise.all([clean.stop(), billing.stop()]);
    await workspace.dispose();
  });

  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.close();
  });

  async function receiver(...script: ScriptedAnswer[]): Promise<WebhookReceiver> {
    const started = await startWebhookReceiver(script);
    receivers.push(started);
    return started;
  }

  async function ordersCsv(sandbox: RunningSandbox, name: string): Promise<string> {
    const codes = [...sandbox.state.world.orders()].map((plan) => [plan.code, plan.account.alias]);
    return workspace.writeCsv(name, [['order_code', 'account'], ...codes]);
  }

  /** `jobs run nightly` in a warehouse and data folder of its own, with `settings` added to the configuration. */
  async function nightly(
    name: string,
    sandbox: RunningSandbox,
    settings: Record<string, unknown>,
    env: Record<string, string> = {},
  ): Promise<{ result: CliResult; summary: JobSummary; summaryText: string }> {
    const result = await runNightly(name, sandbox, settings, env);
    const summaryFile = result.stdout.trim()
      ? (JSON.parse(result.stdout) as JobSummary).summaryFile
      : await onlySummaryFile(join(workspace.dir, name, 'jobs', 'nightly'));
    const summaryText = await readFile(summaryFile, 'utf8');
    return { result, summary: JSON.parse(summaryText) as JobSummary, summaryText };
  }

  async function runNightly(
    name: string,
    sandbox: RunningSandbox,
    settings: Record<string, unknown>,
    env: Record<string, string>,
  ): Promise<CliResult> {
    const config = join(workspace.dir, `${name}.config.json`);
    await writeFile(
      config,
      JSON.stringify({
        warehouse: join(workspace.dir, `${name}.duckdb`),
        dataDir: join(workspace.dir, name),
        trackingUrl: sandbox.url,
        source: { inputs: [await ordersCsv(sandbox, `${name}.csv`)] },
        track: { concurrency: 8, retryMinMs: 5 },
        ...settings,
      }),
    );
    return runCli(['jobs', 'run', 'nightly', '--config', config, '--json'], {
      PARCEL_RECON_API_KEYS: Object.entries(keysOf(sandbox))
        .map(([alias, key]) => `${alias}=${key}`)
        .join(','),
      PARCEL_RECON_NOW: new Date(sandbox.state.clock.now()).toISOString(),
      ...env,
    });
  }

  async function onlySummaryFile(dir: string): Promise<string> {
    const files = await readdir(dir);
    expect(files).toHaveLength(1);
    return join(dir, files[0]!);
  }

  /** Every run's `runs` row as text: where a token must not be. */
  async function runsRows(name: string): Promise<string> {
    const warehouse = await Warehouse.open(join(workspace.dir, `${name}.duckdb`), { readOnly: true });
    try {
      return JSON.stringify((await warehouse.readAll('SELECT * FROM runs')).getRowObjectsJson());
    } finally {
      await warehouse.close();
    }
  }

  function warnings(result: CliResult): string[] {
    return result.stderr.split('\n').filter((line) => /job notification/.test(line));
  }

  const missingInput = { source: { inputs: [join('/nonexistent', 'orders.csv')] } };

  it('posts one notification of a failed night, with its text and summary, and never shows the token', async () => {
    const hook = await receiver();
    const { result, summary, summaryText } = await nightly('failed', clean, missingInput, {
      PARCEL_RECON_NOTIFY_URL: `${hook.url}/bot${TOKEN}/hook`,
    });
    expect(result.code).not.toBe(0);
    expect(summary.exitState).toBe('failed');
    expect(hook.posts).toHaveLength(1);
    const body = hook.posts[0]!.body as Notification;
    expect(Object.keys(body)).toEqual(['text', 'summary']);
    // The summary sent is the one written before the alert went; the file then records the delivery.
    const { alerts, ...sent } = summary;
    expect(body.summary).toEqual(sent);
    expect(alerts).toEqual([
      {
        channel: 'webhook',
        format: 'json',
        receiver: new URL(hook.url).host,
        reasons: ['failed'],
        delivered: true,
        attempts: 1,
        reason: null,
      },
    ]);
    // The `runs` row holds the same summary, deliveries included.
    expect(JSON.parse(JSON.parse(await runsRows('failed'))[0].summary)).toEqual(summary);
    expect(body.text).toMatch(
      new RegExp(
        `^parcel-recon nightly on .+: failed \\(exit ${summary.exitCode}\\), carrier day ${summary.carrierDay}, run ${summary.runId}\\n`,
      ),
    );
    expect(body.text).toMatch(/\nerror: .+\n/);
    expect(body.text).toMatch(/\ncodes read 0, looked up ok 0, .*\n/);
    expect(body.text.endsWith(`\nsummary: ${summary.summaryFile}`)).toBe(true);
    expect(warnings(result)).toEqual([expect.stringMatching(/"msg":"job notification sent"/)]);
    for (const text of [result.stdout, result.stderr, summaryText, await runsRows('failed')])
      expect(text).not.toContain(TOKEN);
  });

  it('posts a night that cannot start, its lock held by a run still going or its warehouse unreadable', async () => {
    const hook = await receiver();
    const env = { PARCEL_RECON_NOTIFY_URL: `${hook.url}/bot${TOKEN}/hook` };
    const lock = await acquireJobLock(join(workspace.dir, 'locked', 'locks'), 'nightly', 'Asia/Ho_Chi_Minh');
    let locked: CliResult;
    try {
      locked = await runNightly('locked', clean, {}, env);
    } finally {
      await lock.release();
    }
    await writeFile(join(workspace.dir, 'unreadable.duckdb'), 'not a DuckDB file\n'.repeat(1000));
    const unreadable = await runNightly('unreadable', clean, {}, env);

    expect(hook.posts).toHaveLength(2);
    for (const [result, post, error] of [
      // The lock's holder started at a time shown in the display time zone, with its offset.
      [
        locked,
        hook.posts[0]!,
        /^job nightly is already running \(PID \d+ on .+, since \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+07:00\)$/,
      ],
      [unreadable, hook.posts[1]!, /unreadable\.duckdb/],
    ] as const) {
      expect(result.code).not.toBe(0);
      const body = post.body as { text: string; summary: Record<string, unknown> };
      expect(body.text).toMatch(/^parcel-recon nightly on .+: failed to start\nerror: .+/);
      expect(body.summary).toEqual({
        job: 'nightly',
        exitState: 'failed',
        started: false,
        error: expect.stringMatching(error),
      });
      expect(warnings(result)).toEqual([expect.stringMatching(/"msg":"job notification sent"/)]);
      for (const text of [result.stdout, result.stderr, body.text]) expect(text).not.toContain(TOKEN);
    }
  });

  it('posts a partial night, and nothing for a night that ends ok with no charge flagged', async () => {
    const hook = await receiver();
    const env = { PARCEL_RECON_NOTIFY_URL: `${hook.url}/hook` };
    const partial = await nightly('partial', clean, { track: { maxLookups: 5 } }, env);
    expect(partial.result.code).toBe(3);
    expect(hook.posts).toHaveLength(1);
    const body = hook.posts[0]!.body as Notification;
    const { alerts, ...sent } = partial.summary;
    expect(body.summary).toEqual(sent);
    expect(alerts).toMatchObject([{ reasons: ['partial'], delivered: true }]);
    expect(body.text).toMatch(/: partial \(exit 3\), /);
    expect(body.text).toMatch(/\ntrack: partial\n/);

    const ok = await nightly('ok', clean, {}, env);
    expect(ok.result.code, ok.result.stderr).toBe(0);
    const charges = ok.summary.steps.find((s) => s.step === 'charges report')!.summary as {
      findings: string[];
    };
    expect(charges.findings[0]).toMatch(/^\d+ orders checked, 0 flagged, 0 VND at stake$/);
    expect(hook.posts).toHaveLength(1);
    expect(warnings(ok.result)).toEqual([]);
    expect(ok.summary.alerts).toEqual([]);
  });

  it('posts a night whose charges report flags more money than the threshold, and not one that flags less', async () => {
    const hook = await receiver();
    const env = { PARCEL_RECON_NOTIFY_URL: `${hook.url}/hook` };
    const flagged = await nightly('flagged', billing, {}, env);
    expect(flagged.result.code, flagged.result.stderr).toBe(0);
    expect(hook.posts).toHaveLength(1);
    const body = hook.posts[0]!.body as Notification;
    const charges = flagged.summary.steps.find((s) => s.step === 'charges report')!.summary as {
      findings: string[];
      figures: { checks: { check_name: string; account_alias: string; amount_at_stake: string }[] };
    };
    const atStake = Number(
      charges.figures.checks.find((c) => c.check_name === 'any' && c.account_alias === '*')!.amount_at_stake,
    );
    expect(atStake).toBeGreaterThan(0);
    expect(body.text).toMatch(/: ok \(exit 0\), /);
    expect(body.text).toContain(`\ncharges: ${charges.findings[0]}\n`);
    for (const check of charges.findings.slice(1)) expect(body.text).toContain(`\n  ${check}\n`);

    const below = await nightly('below', billing, { notify: { chargesAtStakeAbove: atStake } }, env);
    expect(below.result.code).toBe(0);
    expect(hook.posts).toHaveLength(1);
  });

  it('leaves the exit code alone when the receiver is down or always fails, with one warning that names no URL', async () => {
    let started = Date.now();
    const failed = await nightly('reference', clean, missingInput);
    const withoutNotification = Date.now() - started;
    const closedUrl = `http://127.0.0.1:${await freePort()}/bot${TOKEN}/hook`;
    started = Date.now();
    const down = await nightly(
      'down',
      clean,
      { ...missingInput, notify: { retries: 2, timeoutMs: 10_000 } },
      {
        PARCEL_RECON_NOTIFY_URL: closedUrl,
      },
    );
    // The delivery gives up within its bound (what else the run does varies with the machine's load).
    expect(Date.now() - started - withoutNotification).toBeLessThan(10_000 + 5_000);
    expect(down.result.code).toBe(failed.result.code);
    expect(down.summary.exitCode).toBe(failed.summary.exitCode);
    expect(warnings(down.result)).toEqual([
      expect.stringMatching(/"attempts":3,.*"msg":"job notification not delivered: ECONNREFUSED"/),
    ]);
    expect(down.result.stderr).toContain(`"receiver":"127.0.0.1:${new URL(closedUrl).port}"`);
    expect(down.summary.alerts).toEqual([
      {
        channel: 'webhook',
        format: 'json',
        receiver: `127.0.0.1:${new URL(closedUrl).port}`,
        reasons: ['failed'],
        delivered: false,
        attempts: 3,
        reason: 'ECONNREFUSED',
      },
    ]);

    const failing = await receiver(...Array.from({ length: 5 }, () => ({ status: 500 })));
    const partial = await nightly(
      'always-500',
      clean,
      { track: { maxLookups: 5 }, notify: { retries: 2, timeoutMs: 10_000 } },
      { PARCEL_RECON_NOTIFY_URL: `${failing.url}/bot${TOKEN}/hook` },
    );
    expect(partial.result.code).toBe(3);
    expect(failing.posts).toHaveLength(3);
    expect(warnings(partial.result)).toEqual([
      expect.stringMatching(/"msg":"job notification not delivered: HTTP 500"/),
    ]);
    expect(partial.summary.alerts).toMatchObject([{ reasons: ['partial'], delivered: false, reason: 'HTTP 500' }]);

    const unset = await nightly('unset', clean, { ...missingInput, notify: { urlEnv: 'SHOP_ALERTS_URL' } });
    expect(unset.result.code).toBe(failed.result.code);
    expect(warnings(unset.result)).toEqual([
      expect.stringMatching(/"msg":"job notification not sent: SHOP_ALERTS_URL is not set"/),
    ]);
    expect(unset.summary.alerts).toEqual([
      {
        channel: 'webhook',
        format: 'json',
        receiver: null,
        reasons: ['failed'],
        delivered: false,
        attempts: 0,
        reason: 'SHOP_ALERTS_URL is not set',
      },
    ]);
    for (const run of [down, partial, unset])
      for (const text of [run.result.stdout, run.result.stderr, run.summaryText]) {
        expect(text).not.toContain(TOKEN);
        expect(text).not.toContain('/hook');
      }
  });

  it('retries a receiver that answers 500 once, and delivers once', async () => {
    const flaky = await receiver({ status: 500 });
    const { result } = await nightly('flaky', clean, missingInput, { PARCEL_RECON_NOTIFY_URL: `${flaky.url}/hook` });
    expect(flaky.posts).toHaveLength(2);
    expect(flaky.posts[1]!.body).toEqual(flaky.posts[0]!.body);
    expect(warnings(result)).toEqual([expect.stringMatching(/"attempts":2,.*"msg":"job notification sent"/)]);
  });

  it("sends Telegram's sendMessage form to the bot URL from the variable urlEnv names, and the text alone for strict receivers", async () => {
    const bot = await receiver();
    const telegram = await nightly(
      'telegram',
      clean,
      { ...missingInput, notify: { urlEnv: 'TELEGRAM_BOT_URL', format: 'telegram', telegramChatId: '-1001234567890' } },
      { TELEGRAM_BOT_URL: `${bot.url}/bot${TOKEN}/sendMessage` },
    );
    expect(bot.posts).toHaveLength(1);
    expect(bot.posts[0]!.path).toBe(`/bot${TOKEN}/sendMessage`);
    const body = bot.posts[0]!.body as { chat_id: string; text: string };
    expect(Object.keys(body)).toEqual(['chat_id', 'text']);
    expect(body.chat_id).toBe('-1001234567890');
    expect(body.text).toMatch(/^parcel-recon nightly on .+: failed \(exit \d\), /);
    expect(body.text).toContain(`\nsummary: ${telegram.summary.summaryFile}`);
    for (const text of [telegram.result.stdout, telegram.result.stderr, telegram.summaryText])
      expect(text).not.toContain(TOKEN);

    const chat = await receiver();
    await nightly(
      'text-only',
      clean,
      { ...missingInput, notify: { format: 'text' } },
      {
        PARCEL_RECON_NOTIFY_URL: `${chat.url}/v1/spaces/AAAA/messages`,
      },
    );
    expect(Object.keys(chat.posts[0]!.body as object)).toEqual(['text']);
  });

  it('jobs notify --test sends a test message and says whether it was delivered, exit 1 when it was not', async () => {
    const config = join(workspace.dir, 'notify-test.config.json');
    await writeFile(config, JSON.stringify({ notify: { retries: 1, timeoutMs: 5_000 } }));
    const hook = await receiver();
    const live = await runCli(['jobs', 'notify', '--test', 'nightly', '--config', config], {
      PARCEL_RECON_NOTIFY_URL: `${hook.url}/bot${TOKEN}/hook`,
    });
    expect(live.code, live.stderr).toBe(0);
    expect(live.stdout).toBe(`webhook (json) ${new URL(hook.url).host}: delivered (1 attempt)\n`);
    expect(hook.posts).toHaveLength(1);
    const body = hook.posts[0]!.body as { text: string; summary: unknown };
    expect(body.text).toMatch(/^parcel-recon nightly on .+: test message/);
    expect(body.summary).toEqual({ job: 'nightly', test: true });

    const closedUrl = `http://127.0.0.1:${await freePort()}/bot${TOKEN}/hook`;
    const dead = await runCli(['jobs', 'notify', '--test', 'finance-audit', '--config', config, '--json'], {
      PARCEL_RECON_NOTIFY_URL: closedUrl,
    });
    expect(dead.code).toBe(1);
    expect(JSON.parse(dead.stdout)).toEqual([
      {
        channel: 'webhook',
        format: 'json',
        receiver: new URL(closedUrl).host,
        reasons: ['test'],
        delivered: false,
        attempts: 2,
        reason: 'ECONNREFUSED',
      },
    ]);
    for (const text of [live.stdout, live.stderr, dead.stdout, dead.stderr]) expect(text).not.toContain(TOKEN);

    const none = await runCli(['jobs', 'notify', '--test', 'nightly', '--config', config], {});
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('webhook (json): not delivered: PARCEL_RECON_NOTIFY_URL is not set (0 attempts)\n');
  });

  it('refuses a telegram notify section without its chat, and a webhook URL in the configuration', async () => {
    const config = join(workspace.dir, 'refused.config.json');
    await writeFile(config, JSON.stringify({ notify: { format: 'telegram' } }));
    const telegram = await runCli(['jobs', 'list', '--config', config], {});
    expect(telegram.code).toBe(2);
    expect(telegram.stderr).toBe(
      `parcel-recon: config ${config}: notify.telegramChatId: format "telegram" needs telegramChatId\n`,
    );
    await writeFile(config, JSON.stringify({ notify: { url: `https://hooks.slack.com/services/${TOKEN}` } }));
    const inFile = await runCli(['jobs', 'list', '--config', config], {});
    expect(inFile.code).toBe(2);
    expect(inFile.stderr).toBe(`parcel-recon: config ${config}: unknown field notify.url\n`);
  });
});
