/** A small tmpfs mounted on a folder, to fill a disk for real. Mounting needs root (as CI runs). */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Whether this process may mount: root, or CI, where a test that mounts must run (and fail if it cannot). */
export const CAN_MOUNT = process.getuid?.() === 0 || process.env.CI === 'true';

/** Mounts a tmpfs of `size` (`1m`...) on `dir`, read-only when asked; the caller unmounts it. */
export async function mountSmallDisk(dir: string, size: string, options: { readOnly?: boolean } = {}): Promise<void> {
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size}${options.readOnly === true ? ',ro' : ''}`, 'tmpfs', dir]);
}

/** Grows (or shrinks) a mounted tmpfs in place: what it holds stays. */
export async function resizeSmallDisk(dir: string, size: string): Promise<void> {
  await run('mount', ['-o', `remount,size=${size}`, dir]);
}

/** Unmounts, even while a file on it is still open (a test that failed before closing it): lazily. */
export async function unmountSmallDisk(dir: string): Promise<void> {
  await run('umount', ['--lazy', dir]);
}
