/**
 * A CLI worker's identity across restarts on the same state, so a run restarted after kill -9
 * takes its dead run's leases back at once (WorkerOptions.formerSelf says why that is safe).
 *
 * The state directory holds one file per slot, `workers/w<n>.pid`: the process that has it (pid,
 * and on Linux its start time, pid namespace and boot) and the tokens of the dead runs it took
 * it from. A run takes the lowest slot whose process is not alive (isRunning); its worker id is
 * `<slot>~<token>` (a new token per run; the
 * CLI's rounds add `.<round>`), and its former selves are exactly the tokens it found in the file:
 * runs known dead, never another live process.
 *
 * Two processes starting at once: choosing is serialised by `workers/choose.lock` (created
 * exclusively, removed after; one left by a process that died while choosing is removed when its
 * pid is dead), so they get different slots. Should that lock ever be broken (two processes
 * removing the same stale lock), both would share a slot name but still have distinct worker ids
 * and only dead tokens as former selves: no lease is taken from a live run.
 */
import { createHash, randomUUID } from "node:crypto";
import { open, readFile, readlink, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { makeDirectory } from "../dynamodb/embedded/state-dir.js";

export interface CliWorkerIdentity {
  /** Stable for this state directory (and host): the slot the leader gives partitions back to. */
  readonly slot: string;
  /** This run's id: `<slot>~<token>`. */
  readonly workerId: string;
  /** Whether `owner` is a dead earlier run of this slot (with or without a round suffix). */
  formerSelf(owner: string): boolean;
}

const WORKERS_DIR = "workers";
const CHOOSE_LOCK = "choose.lock";
/** Tokens of dead runs a slot remembers: enough for a few crashes in a row before their leases expire. */
const HISTORY = 8;
const CHOOSE_TIMEOUT_MS = 10_000;

/**
 * Which process holds a slot. A pid alone is not enough: pids are reused (a container restarted
 * is often pid 1 again) and mean nothing in another pid namespace (two containers sharing a
 * volume and a hostname). Linux's /proc says which process a pid is; elsewhere only the pid.
 */
interface ProcessMark {
  readonly pid: number;
  /** Clock ticks since boot at which it started (/proc/<pid>/stat field 22). */
  readonly start?: string;
  /** Its pid namespace (readlink /proc/self/ns/pid). */
  readonly ns?: string;
  /** The boot it started in (/proc/sys/kernel/random/boot_id). */
  readonly boot?: string;
}

interface SlotFile extends ProcessMark {
  readonly tokens: readonly string[];
}

/**
 * Takes a slot in `stateDir` for this process. `shared`: the lease table is shared with other
 * hosts and state directories (DynamoDB), so the slot name carries a hash of the directory too.
 */
export async function claimWorkerIdentity(stateDir: string, shared: boolean): Promise<CliWorkerIdentity> {
  const dir = join(stateDir, WORKERS_DIR);
  await makeDirectory(dir, 0o700);
  const token = randomUUID().slice(0, 8);
  const { n, former } = await choosing(dir, () => takeSlot(dir, token));
  const place = shared ? `${createHash("sha256").update(stateDir).digest("hex").slice(0, 6)}-` : "";
  const slot = `${hostname()}-${place}w${n}`;
  const formerTokens = new Set(former);
  return {
    slot,
    workerId: `${slot}~${token}`,
    formerSelf: (owner) => {
      const match = /^(.*)~([^.~]+)(\.\d+)?$/.exec(owner);
      return match !== null && match[1] === slot && formerTokens.has(match[2] ?? "");
    },
  };
}

async function takeSlot(dir: string, token: string): Promise<{ n: number; former: readonly string[] }> {
  for (let n = 0; ; n++) {
    const file = join(dir, `w${n}.pid`);
    const held = await readSlot(file);
    if (held !== null && (await isRunning(held))) continue;
    const former = held?.tokens ?? [];
    const tokens = [token, ...former].slice(0, HISTORY);
    await writeFile(file, JSON.stringify({ ...(await markOf(process.pid)), tokens }), { mode: 0o600 });
    return { n, former };
  }
}

/** Runs `choose` while holding the directory's choose.lock. */
async function choosing<T>(dir: string, choose: () => Promise<T>): Promise<T> {
  const lock = join(dir, CHOOSE_LOCK);
  const giveUpAt = Date.now() + CHOOSE_TIMEOUT_MS;
  for (;;) {
    try {
      const handle = await open(lock, "wx", 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number.parseInt(await readFile(lock, "utf8").catch(() => ""), 10);
      // A holder that died while choosing: its lock would stop every later run.
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && !isAlive(holder))
        await rm(lock, { force: true });
      else if (Date.now() > giveUpAt)
        throw new Error(`${lock} held by pid ${holder} for ${CHOOSE_TIMEOUT_MS} ms`);
      else await sleep(20);
    }
  }
  try {
    return await choose();
  } finally {
    await rm(lock, { force: true });
  }
}

async function readSlot(file: string): Promise<SlotFile | null> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as Partial<SlotFile>;
    if (typeof parsed.pid !== "number" || !Array.isArray(parsed.tokens)) return null;
    const text = (value: unknown) => (typeof value === "string" ? value : undefined);
    return {
      pid: parsed.pid,
      start: text(parsed.start),
      ns: text(parsed.ns),
      boot: text(parsed.boot),
      tokens: parsed.tokens.filter((t): t is string => typeof t === "string"),
    };
  } catch {
    return null;
  }
}

/** This process's mark, or a pid's as /proc shows it now; only the pid where there is no /proc. */
export async function markOf(pid: number): Promise<ProcessMark> {
  const read = (path: string) =>
    readFile(path, "utf8").then(
      (t) => t.trim(),
      () => undefined,
    );
  const [stat, ns, boot] = await Promise.all([
    read(`/proc/${pid}/stat`),
    readlink("/proc/self/ns/pid").catch(() => undefined),
    read("/proc/sys/kernel/random/boot_id"),
  ]);
  // Field 22; the command name (field 2) may hold spaces, so count from its closing parenthesis.
  const start = stat?.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  return { pid, start, ns, boot };
}

/**
 * Whether the process that took a slot still runs. When in doubt (another pid namespace: its pids
 * are not ours to look up) it counts as running, and the new run takes another slot and waits
 * for leases to expire instead of taking a live run's leases.
 */
export async function isRunning(holder: ProcessMark): Promise<boolean> {
  const here = await markOf(process.pid);
  if (holder.ns !== undefined && here.ns !== undefined && holder.ns !== here.ns) return true;
  if (holder.boot !== undefined && here.boot !== undefined && holder.boot !== here.boot) return false;
  if (!isAlive(holder.pid)) return false;
  if (holder.start === undefined) return true;
  // The pid runs; whether it is the same process is in its start time (pids are reused).
  const now = holder.pid === process.pid ? here : await markOf(holder.pid);
  return now.start === undefined || now.start === holder.start;
}

/** kill(pid, 0): EPERM means alive (another user's process), ESRCH gone. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
