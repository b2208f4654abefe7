// What a test can learn about local processes from /proc and signal 0, to check that what it
// started is gone (or how much memory and CPU time it uses) without trusting the code that
// started it.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the processes whose command line holds `text` (e.g. a cluster's data dir). */
export function processesMentioning(text: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
      } catch {
        return false; // exited meanwhile
      }
    })
    .map(Number);
}

/** Resident memory in MiB; NaN when the process is unknown. */
export function rssMiB(pid: number | undefined): number {
  let status = "";
  try {
    status = pid === undefined ? "" : readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    // exited
  }
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024);
}

let clockTicks: number | undefined;

/** USER_HZ, the unit of /proc's CPU times (sysconf(_SC_CLK_TCK), asked of getconf once). */
function ticksPerSecond(): number {
  clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  if (!Number.isFinite(clockTicks) || clockTicks <= 0) throw new Error(`getconf CLK_TCK gave ${clockTicks}`);
  return clockTicks;
}

/**
 * User + system CPU seconds the process has used so far, all its threads included (a JVM's GC
 * and JIT threads too); NaN when it is gone. Resolution: one clock tick (10 ms on Linux).
 */
export function cpuSeconds(pid: number | undefined): number {
  let stat = "";
  try {
    stat = pid === undefined ? "" : readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return Number.NaN; // exited
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / ticksPerSecond();
}

/** Peak resident memory (VmHWM) in MiB; NaN when the process is unknown. */
export function peakRssMiB(pid: number | undefined): number {
  let status = "";
  try {
    status = pid === undefined ? "" : readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    // exited
  }
  return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024);
}
