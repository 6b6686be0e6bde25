import { defaultShown } from './command-options.js';
import type { Setting, SettingsCatalog } from './setting.js';

/** The documents whose marked regions are the catalog's tables (README's when it has the markers). */
export const SETTINGS_DOCUMENTS = ['docs/commands.md', 'README.md'] as const;

/** How much a region's table says: all of it, or (`brief`, where bytes count) where each value is given. */
type TableDetail = 'full' | 'brief';

/** A markdown table with its columns aligned, as the formatter writes them. */
function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

/** Text for a table cell: a pipe would end the cell. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

const code = (text: string | undefined) => (text === undefined ? '' : `\`${text}\``);
const flagOnly = (setting: Setting) => setting.flag?.split(' ')[0];

function flagCell(setting: Setting): string {
  if (setting.flag === undefined) return '';
  const commands = setting.commands.filter((command) => command !== 'jobs' && command !== 'config show');
  return `${code(flagOnly(setting))}${commands.length === 0 ? '' : ` (${commands.join(', ')})`}`;
}

function renamedCell(setting: Setting): string {
  const earlier = [...(setting.renamedFrom?.env ?? []), ...(setting.renamedFrom?.configKey ?? [])];
  return earlier.length === 0 ? '' : `; formerly ${earlier.map(code).join(', ')}`;
}

/** Every setting: its flag and the commands taking it, its variable, its configuration key, its default, what it is. */
function settingsTable(catalog: SettingsCatalog): string {
  const rows = Object.entries(catalog).map(([name, setting]) => [
    code(name),
    cell(flagCell(setting)),
    code(setting.env),
    code(setting.configKey),
    cell(setting.secret ? 'secret' : (defaultShown(setting) ?? '')),
    cell(`${setting.help}${renamedCell(setting)}`),
  ]);
  return markdownTable(['setting', 'flag (commands)', 'variable', 'configuration key', 'default', 'what'], rows);
}

/** A help text up to its first colon, semicolon, comma or parenthesis: what the setting is, without the detail. */
function firstClause(help: string): string {
  return help.split(/: |; |, | \(/)[0]!;
}

/** The environment variables: each with what it sets and the flag and key it stands beside; brief: only those, of the variables a command reads. */
function environmentTable(catalog: SettingsCatalog, detail: TableDetail): string {
  const withVariable = Object.values(catalog).filter((setting) => setting.env !== undefined);
  if (detail === 'brief')
    return markdownTable(
      ['variable', 'what (its flag, its configuration key)'],
      // Brief where bytes count: what no command reads (the sandbox's own, the tests') is in the full table only.
      withVariable
        .filter((setting) => setting.commands.length > 0)
        .map((setting) => {
          const places = [flagOnly(setting), setting.configKey].filter((place) => place !== undefined).map(code);
          return [
            `${code(setting.env)}${setting.secret ? ' (secret)' : ''}`,
            cell(`${firstClause(setting.help)}${places.length === 0 ? '' : ` (${places.join(', ')})`}`),
          ];
        }),
    );
  const rows = withVariable.map((setting) => {
    const shown = defaultShown(setting);
    const notes = [
      ...[flagOnly(setting), setting.configKey].filter((place) => place !== undefined).map(code),
      ...(setting.secret ? ['a secret'] : []),
      ...(shown === undefined ? [] : [`default ${code(shown)}`]),
    ];
    return [code(setting.env), cell(`${setting.help}${notes.length === 0 ? '' : ` (${notes.join('; ')})`}`)];
  });
  return markdownTable(['variable', 'what'], rows);
}

const REGIONS: Readonly<Record<string, (catalog: SettingsCatalog, detail: TableDetail) => string>> = {
  settings: settingsTable,
  environment: environmentTable,
};

/**
 * A document with each marked region (`<!-- NAME:begin -->` ... `<!-- NAME:end -->`, NAME `settings`
 * or `environment`; `<!-- environment:begin brief -->` for the variables' places only) written again
 * from the catalog; the text outside the markers is kept as it is.
 */
export function withSettingsRegions(document: string, catalog: SettingsCatalog): string {
  let written = document;
  for (const [name, table] of Object.entries(REGIONS)) {
    const begin = new RegExp(`<!-- ${name}:begin( brief)? -->`).exec(written);
    const end = `<!-- ${name}:end -->`;
    const to = written.indexOf(end);
    if (begin === null || to < begin.index) continue;
    const content = table(catalog, begin[1] === undefined ? 'full' : 'brief');
    written = `${written.slice(0, begin.index + begin[0].length)}\n${content}\n${written.slice(to)}`;
  }
  return written;
}
