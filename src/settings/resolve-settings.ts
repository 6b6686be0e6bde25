import {
  flagAttribute,
  flagName,
  type Setting,
  SettingError,
  type SettingOrigin,
  type SettingsCatalog,
  type SettingsCommand,
  type SettingValues,
} from './setting.js';

/** The configuration file as read: its path and its checked contents, before any default. */
export interface ConfigFileContents {
  readonly path: string;
  readonly contents: Readonly<Record<string, unknown>>;
}

/** What a command's settings are resolved from. */
export interface SettingsSources {
  /** The command whose flags are given; none when only the environment and the file count. */
  readonly command?: SettingsCommand;
  /** The flags as commander parsed them (`opts()`): a flag not given is undefined. */
  readonly flags?: object;
  readonly env: NodeJS.ProcessEnv;
  readonly file: ConfigFileContents | null;
}

export interface ResolvedSettings<C extends SettingsCatalog> {
  readonly values: SettingValues<C>;
  readonly origins: { readonly [K in keyof C]: SettingOrigin };
  /** One line for each earlier name still in use, naming the current one. */
  readonly warnings: readonly string[];
}

/** The configuration file's value at a dotted key, or undefined. */
function valueAtKey(contents: Readonly<Record<string, unknown>>, key: string): unknown {
  let value: unknown = contents;
  for (const part of key.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

interface Given {
  readonly raw: unknown;
  readonly origin: SettingOrigin;
  /** Flags 0, the environment 1, the file 2. */
  readonly rank: number;
  readonly warning?: string;
}

function fromText(setting: Setting, raw: unknown): unknown {
  const convert = setting.fromText ?? ((text: string) => text);
  if (typeof raw === 'string') return convert(raw);
  if (Array.isArray(raw)) return raw.map((item) => (typeof item === 'string' ? convert(item) : item));
  return raw;
}

/** The first place that gives the setting a value: its flag, its variable (or an earlier name of it), the file. */
function firstGiven(setting: Setting, sources: SettingsSources): Given | undefined {
  const flagged =
    setting.flag !== undefined && sources.command !== undefined && setting.commands.includes(sources.command)
      ? (sources.flags as Readonly<Record<string, unknown>> | undefined)?.[flagAttribute(setting.flag)]
      : undefined;
  if (flagged !== undefined) {
    const raw = flagged;
    return { raw: fromText(setting, raw), origin: { kind: 'flag', flag: flagName(setting.flag!) }, rank: 0 };
  }
  const variables = [setting.env, ...(setting.renamedFrom?.env ?? [])];
  for (const variable of variables) {
    const text = variable === undefined ? undefined : sources.env[variable];
    if (variable === undefined || text === undefined || text === '') continue;
    return {
      raw: fromText(setting, text),
      origin: { kind: 'environment', variable },
      rank: 1,
      ...(variable === setting.env ? {} : { warning: `${variable} is renamed ${setting.env}; set ${setting.env}` }),
    };
  }
  const file = sources.file;
  if (file !== null && setting.configKey !== undefined) {
    for (const key of [setting.configKey, ...(setting.renamedFrom?.configKey ?? [])]) {
      const raw = valueAtKey(file.contents, key);
      if (raw === undefined) continue;
      return {
        raw,
        origin: { kind: 'file', file: file.path, key },
        rank: 2,
        ...(key === setting.configKey
          ? {}
          : { warning: `config ${file.path}: ${key} is renamed ${setting.configKey}; write ${setting.configKey}` }),
      };
    }
  }
  return undefined;
}

/** Where a value came from, as a message names it. */
function originLabel(origin: SettingOrigin): string {
  switch (origin.kind) {
    case 'flag':
      return origin.flag;
    case 'environment':
      return origin.variable;
    case 'file':
      return `config ${origin.file}: ${origin.key}`;
    case 'default':
      return 'default';
  }
}

function checked(setting: Setting, given: Given): unknown {
  const schema = given.origin.kind === 'environment' ? setting.type : (setting.whenVisible ?? setting.type);
  const result = schema.safeParse(given.raw);
  if (!result.success) throw new SettingError(`${originLabel(given.origin)}: ${result.error.issues[0]!.message}`);
  return result.data;
}

/**
 * Resolves every setting of the catalog the one way each command and job takes: the command's flag,
 * then the environment, then the configuration file, then the default; settings of one group come
 * from the first place that gives any of them. Each value's origin is kept. A value its type refuses
 * is one line naming where it came from, thrown when the value is read: a command fails on its own
 * settings, not on a variable it never reads.
 */
export function resolveSettings<C extends SettingsCatalog>(catalog: C, sources: SettingsSources): ResolvedSettings<C> {
  const given = new Map<string, Given>();
  for (const [name, setting] of Object.entries(catalog)) {
    const first = firstGiven(setting, sources);
    if (first !== undefined) given.set(name, first);
  }
  // A group is taken from the first place that gives any of its settings.
  const groupRank = new Map<string, number>();
  for (const [name, first] of given) {
    const group = catalog[name]!.group;
    if (group !== undefined) groupRank.set(group, Math.min(groupRank.get(group) ?? first.rank, first.rank));
  }
  const values: Record<string, unknown> = {};
  const origins: Record<string, SettingOrigin> = {};
  const warnings: string[] = [];
  for (const [name, setting] of Object.entries(catalog)) {
    const first = given.get(name);
    const taken = first !== undefined && (setting.group === undefined || groupRank.get(setting.group) === first.rank);
    origins[name] = taken ? first.origin : { kind: 'default' };
    if (taken && first.warning !== undefined) warnings.push(first.warning);
    let value: unknown;
    let refusal: unknown;
    try {
      const fallback = setting.default;
      value = taken ? checked(setting, first) : typeof fallback === 'function' ? fallback(values) : fallback;
    } catch (error) {
      refusal = error;
    }
    Object.defineProperty(values, name, {
      enumerable: true,
      get: () => {
        if (refusal !== undefined) throw refusal;
        return value;
      },
    });
  }
  return { values: values as SettingValues<C>, origins: origins as ResolvedSettings<C>['origins'], warnings };
}
