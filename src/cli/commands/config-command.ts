import { Command } from 'commander';
import { EXIT } from '../../errors/exit-codes.js';
import { SETTINGS } from '../../settings/catalog.js';
import { withSettingOptions } from '../../settings/command-options.js';
import { loadSettings } from '../../settings/load-settings.js';
import type { SettingOrigin } from '../../settings/setting.js';
import { productErrorOf } from '../failure-advice.js';

/** One resolved setting as `config show` prints it: a secret only as set or unset. */
interface ShownSetting {
  readonly name: string;
  readonly value: unknown;
  readonly secret: boolean;
  readonly origin: SettingOrigin;
  /** Why the value its origin gives is refused, when it is. */
  readonly invalid?: string;
}

/** Where a value came from, in words. */
function originText(origin: SettingOrigin): string {
  switch (origin.kind) {
    case 'flag':
      return `flag ${origin.flag}`;
    case 'environment':
      return `environment ${origin.variable}`;
    case 'file':
      return `file ${origin.file} key ${origin.key}`;
    case 'default':
      return 'default';
  }
}

/** A URL's password, wherever a value holds one (a whole Redis URL from the environment), replaced. */
function withoutPassword(value: unknown): unknown {
  if (typeof value !== 'string' || !URL.canParse(value)) return value;
  const url = new URL(value);
  if (url.password === '') return value;
  url.password = 'redacted';
  return url.toString();
}

function valueText(shown: ShownSetting): string {
  if (shown.invalid !== undefined) return `invalid: ${shown.invalid}`;
  if (shown.value === undefined) return '-';
  return typeof shown.value === 'string' ? shown.value : JSON.stringify(shown.value);
}

/** `config show`: every setting as the commands and jobs resolve it, and where each value came from. */
export function configCommand(): Command {
  const config = new Command('config').description('The settings: what each is, and where it came from.');
  withSettingOptions(
    config
      .command('show')
      .description(
        'Print every setting as the commands and jobs resolve it (flag, then environment, then configuration file, then default) with its origin; secrets only as set or unset.',
      ),
    'config show',
    SETTINGS,
  )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 every value is valid; 2 a value is refused (named in its row), or the file is.',
    )
    .action(async (flags: { json?: boolean }) => {
      const { values, origins } = await loadSettings('config show', flags, process.env);
      const shown: ShownSetting[] = Object.entries(SETTINGS).map(([name, setting]) => {
        const secret = 'secret' in setting && setting.secret;
        const origin = origins[name as keyof typeof SETTINGS];
        try {
          const value = values[name as keyof typeof SETTINGS];
          return {
            name,
            value: secret ? (value === undefined ? 'unset' : 'set') : withoutPassword(value),
            secret,
            origin,
          };
        } catch (error) {
          const refusal = productErrorOf(error);
          if (refusal === undefined) throw error;
          return { name, value: undefined, secret, origin, invalid: secret ? 'refused' : refusal.message };
        }
      });
      if (flags.json) process.stdout.write(`${JSON.stringify(shown)}\n`);
      else {
        const width = Math.max(...shown.map((s) => s.name.length));
        for (const s of shown)
          process.stdout.write(`${s.name.padEnd(width)}  ${valueText(s)}  (${originText(s.origin)})\n`);
      }
      process.exitCode = shown.some((s) => s.invalid !== undefined) ? EXIT.BAD_INPUT : EXIT.OK;
    });
  return config;
}
