/**
 * CPU time and peak memory of a process from /proc (Linux). On a machine others load too, CPU time per
 * unit of work compares runs better than wall time or a rate does.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

/** /proc reports in USER_HZ ticks, 100 a second on Linux. */
const MS_PER_TICK = 10;

/** utime + stime of one /proc stat line, in ms (fields 14 and 15; the command name may hold spaces). */
function statCpuMs(statLine: string): number {
  const fields = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
}

/** CPU seconds (user + system, all threads) a process has used. */
export async function processCpuSeconds(pid: number): Promise<number> {
  return statCpuMs(await readFile(`/proc/${pid}/stat`, 'utf8')) / 1000;
}

/** Peak resident memory of a process in MB, from /proc/PID/status. */
export async function processPeakMemoryMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
  return Math.round(Number(kb) / 1024);
}

export interface ProcessCpu {
  readonly mainMs: number;
  readonly otherThreadsMs: number;
}

/**
 * The CPU used so far by `pid`, split into its main thread and the rest (DuckDB's, libuv's and V8's
 * helper threads; those that ended too, which the process total keeps).
 */
export function processCpu(pid: number): ProcessCpu {
  const totalMs = statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  const mainMs = statCpuMs(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
  return { mainMs, otherThreadsMs: totalMs - mainMs };
}

/** What was used between two readings. */
export function cpuSince(before: ProcessCpu, after: ProcessCpu): ProcessCpu {
  return { mainMs: after.mainMs - before.mainMs, otherThreadsMs: after.otherThreadsMs - before.otherThreadsMs };
}
