import { z } from 'zod';
import type { SettingsCatalog } from './setting.js';

interface KeyTree {
  [part: string]: z.ZodType | KeyTree;
}

/**
 * The configuration file's schema, from the settings that have a key: each key (and each earlier
 * name of it) optional with its setting's type, unknown keys refused at every level so that a typo is
 * an error rather than a setting silently ignored. Defaults are the resolver's, not the file's.
 */
export function configFileSchema(catalog: SettingsCatalog): z.ZodObject {
  const tree: KeyTree = {};
  for (const setting of Object.values(catalog)) {
    const keys = setting.configKey === undefined ? [] : [setting.configKey, ...(setting.renamedFrom?.configKey ?? [])];
    for (const key of keys) {
      const parts = key.split('.');
      let node = tree;
      for (const part of parts.slice(0, -1)) {
        node[part] ??= {};
        node = node[part] as KeyTree;
      }
      node[parts.at(-1)!] = setting.whenVisible ?? setting.type;
    }
  }
  return objectOf(tree);
}

function objectOf(tree: KeyTree): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [part, node] of Object.entries(tree))
    shape[part] = (node instanceof z.ZodType ? node : objectOf(node)).optional();
  return z.object(shape).strict();
}
