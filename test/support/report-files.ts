import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Every file of a report folder, by name, as bytes: two runs' folders compare byte for byte. */
export async function reportFilesOf(dir: string): Promise<Record<string, Buffer>> {
  const files: Record<string, Buffer> = {};
  for (const name of (await readdir(dir)).sort()) files[name] = await readFile(join(dir, name));
  return files;
}
