import type { Migration } from './migration.js';
import { migration as baseline } from './v1-baseline.js';

/** Every schema version, oldest first: one file each under this folder. */
export const MIGRATIONS: readonly Migration[] = [baseline];
