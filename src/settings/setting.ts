import type { z } from 'zod';
import { ProductError } from '../errors/product-error.js';

/**
 * The commands whose flags come from the settings. Every command and job reads the environment and
 * the configuration file the same way; `jobs` stands for the named jobs (`jobs run`, `jobs list`,
 * `jobs notify`, `schedule`), whose one flag of a setting is `--config`.
 */
export type SettingsCommand =
  | 'track'
  | 'price'
  | 'images'
  | 'quota'
  | 'sql'
  | 'export'
  | 'replay'
  | 'callbacks serve'
  | 'callbacks ingest'
  | 'report'
  | 'payouts import'
  | 'payouts deposits'
  | 'report cod'
  | 'findings'
  | 'prune'
  | 'upgrade'
  | 'jobs'
  | 'config show';

/** One setting, declared once: everything the flags, the environment, the file, the help and the docs say of it. */
export interface Setting<S extends z.ZodType = z.ZodType> {
  /** The value's type, whatever gave it. */
  readonly type: S;
  /** Turns a flag's or a variable's text into what `type` checks (a number, a list); the text as it is when absent. */
  readonly fromText?: (text: string) => unknown;
  /** The value when nothing gives one; a function reads the settings declared before it. */
  readonly default?: z.output<S> | ((values: Readonly<Record<string, unknown>>) => z.output<S>);
  /** The default as help and the docs word it, when it is not a plain value. */
  readonly defaultText?: string;
  /** `--name <value>`, `--name [value]` or `--name`, for the commands in `commands`. */
  readonly flag?: string;
  /** A flag given again adds to a list. */
  readonly repeatable?: boolean;
  /** Its place in the configuration file, dotted (`track.batchSize`). */
  readonly configKey?: string;
  readonly env?: string;
  /** Earlier names still read, each with a warning naming the current one. */
  readonly renamedFrom?: { readonly env?: readonly string[]; readonly configKey?: readonly string[] };
  readonly help: string;
  /** The commands that take its flag. */
  readonly commands: readonly SettingsCommand[];
  /** Shown only as set or unset, never its value. */
  readonly secret?: boolean;
  /**
   * Settings read together: the ones given where any is given first (flags, then the environment,
   * then the file) are taken, the others in that group from later places are not. A source named on
   * the command line replaces the file's source rather than adding to it.
   */
  readonly group?: string;
  /** `type` narrowed for a value written on a command line or in the file (a URL there holds no password). */
  readonly whenVisible?: z.ZodType;
}

export type SettingsCatalog = Readonly<Record<string, Setting>>;

/** Where a resolved value came from. */
export type SettingOrigin =
  | { readonly kind: 'flag'; readonly flag: string }
  | { readonly kind: 'environment'; readonly variable: string }
  | { readonly kind: 'file'; readonly file: string; readonly key: string }
  | { readonly kind: 'default' };

/** A setting's value as its type gives it: never undefined when it has a default. */
export type SettingValue<T> =
  T extends Setting<infer S>
    ? T extends { readonly default: unknown }
      ? z.output<S>
      : z.output<S> | undefined
    : never;

export type SettingValues<C extends SettingsCatalog> = { readonly [K in keyof C]: SettingValue<C[K]> };

/** A setting given a value it cannot take: one line naming where the value came from. */
export class SettingError extends ProductError {
  declare readonly code: 'BAD_INPUT';

  constructor(message: string) {
    super('BAD_INPUT', message);
  }
}

/** The flag's long name without its value: `--batch-size`. */
export function flagName(flag: string): string {
  return flag.split(/[ =]/)[0]!;
}

/** The property commander stores a flag under: `--batch-size <n>` is `batchSize`. */
export function flagAttribute(flag: string): string {
  return flagName(flag)
    .replace(/^--(no-)?/, '')
    .replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
