/**
 * Whether a process of this host with that PID is running: the owner of a lock, a partial folder or
 * a journal segment named by its PID. One this user may not signal (EPERM) runs all the same.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
