// What a test can learn about local processes from /proc and signal 0, to check that what it
// started is gone (or how much memory it holds) without trusting the code that started it.
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
