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
