/**
 * A CLI worker's identity across restarts on the same state, so a run restarted after kill -9
 * takes its dead run's leases back at once (WorkerOptions.formerSelf says why that is safe).
 *
 * The state directory holds one file per slot, `workers/w<n>.pid`: the pid and token of the run
 * that has it, and the tokens of the dead runs it took it from. A run takes the lowest slot whose
 * run is not alive (kill(pid, 0)); its worker id is `<slot>~<token>` (a new token per run; the
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
import { open, readFile, rm, writeFile } from "node:fs/promises";
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

interface SlotFile {
  readonly pid: number;
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
    if (held !== null && isAlive(held.pid)) continue;
    const former = held?.tokens ?? [];
    const tokens = [token, ...former].slice(0, HISTORY);
    await writeFile(file, JSON.stringify({ pid: process.pid, tokens }), { mode: 0o600 });
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
      if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) await rm(lock, { force: true });
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
    return { pid: parsed.pid, tokens: parsed.tokens.filter((t): t is string => typeof t === "string") };
  } catch {
    return null;
  }
}

/** kill(pid, 0): EPERM means alive (another user's process), ESRCH gone. */
function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
