import { readFile } from 'node:fs/promises';

/**
 * CPU seconds (user + system, all threads) another process has used, from /proc/PID/stat (Linux; clock
 * ticks of 1/100 s): on a machine others load too, a server's CPU time per request says more than its rate.
 */
export async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Peak resident memory of another process in MB, from /proc/PID/status (Linux). */
export async function processPeakMemoryMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
  return Math.round(Number(kb) / 1024);
}
