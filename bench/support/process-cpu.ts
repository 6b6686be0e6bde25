/**
 * CPU time of a process from /proc (Linux), split into its main thread and the rest (DuckDB's, libuv's
 * and V8's helper threads). On a shared machine CPU time per unit of work compares runs better than
 * wall time does.
 */
import { readFileSync } from 'node:fs';

/** /proc reports in USER_HZ ticks, 100 a second on Linux. */
const MS_PER_TICK = 10;

export interface ProcessCpu {
  readonly mainMs: number;
  readonly otherThreadsMs: number;
}

/** utime + stime of one /proc stat line, in ms (fields 14 and 15; the command name may hold spaces). */
function statCpuMs(statLine: string): number {
  const fields = statLine.slice(statLine.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
}

/**
 * The CPU used so far by `pid`: its main thread's and its other threads' (live threads, plus those
 * that ended, which the process total keeps).
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
