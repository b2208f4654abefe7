/**
 * Finds the state directory's lease server, or starts one. Any number of CLI processes may call
 * this at once: each that finds no live server spawns one, LevelDB's lock lets exactly one of
 * them open the data, the others exit, and every caller waits until `server.json` names a live
 * server that answers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, fchmodSync, openSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ReplicatorError } from "../../errors.js";
import {
  isProcessAlive,
  isServing,
  LOG_FILE,
  readOrCreateSecret,
  readServerRecord,
  SERVER_EXIT,
  type ServerRecord,
  STATE_FILE_MODE,
} from "./server-file.js";
import { prepareStateDir, stateDirError } from "./state-dir.js";

export interface EnsureLeaseServerOptions {
  /** @default 10 minutes */
  readonly idleMs?: number;
  /** @default 15000 */
  readonly startTimeoutMs?: number;
}

export const DEFAULT_IDLE_MS = 10 * 60_000;
const POLL_MS = 50;
/**
 * How long to keep looking for a racing process's server after ours died with an unexpected code.
 * A server that loses the LevelDB lock normally exits 3, but the lock error can also surface as
 * an uncaught error (exit 1) from inside the storage layer.
 */
const RACE_GRACE_MS = 3_000;

export async function ensureLeaseServer(
  stateDir: string,
  options: EnsureLeaseServerOptions = {},
): Promise<ServerRecord> {
  const dir = resolve(stateDir);
  try {
    // First, even when a server runs: a directory someone else owns (chmod fails) could name
    // their server, which would then receive our checkpoints.
    await prepareStateDir(dir);
    // Before the server starts, so a racing client never sees a server without its secret.
    await readOrCreateSecret(dir);
  } catch (error) {
    throw stateDirError(dir, error);
  }
  const existing = await readServerRecord(dir);
  if (existing !== null && (await isServing(existing))) return existing;
  let child: ChildProcess;
  try {
    child = spawnServer(dir, options.idleMs ?? DEFAULT_IDLE_MS);
  } catch (error) {
    // Opening its log failed (a directory in its place, a full disk): it cannot start.
    throw stateDirError(dir, error);
  }
  return waitForServer(dir, child, options.startTimeoutMs ?? 15_000);
}

/**
 * Polls until `server.json` names a live server that answers: ours, or a racing process's that
 * won the LevelDB lock. A server still starting is worth waiting for, up to `timeoutMs`; one that
 * exited because the state directory is unusable is not, nor one that died otherwise with no
 * racing server seen within RACE_GRACE_MS.
 */
async function waitForServer(dir: string, child: ChildProcess, timeoutMs: number): Promise<ServerRecord> {
  let childExit: number | null | undefined;
  let exitedAt = 0;
  child.once("exit", (code) => {
    childExit = code;
    exitedAt = Date.now();
  });
  const giveUpAt = Date.now() + timeoutMs;
  while (Date.now() < giveUpAt) {
    const record = await readServerRecord(dir);
    if (
      record !== null &&
      (record.pid === child.pid || childExit !== undefined) &&
      (await isServing(record))
    ) {
      return record;
    }
    if (childExit === SERVER_EXIT.stateDirUnusable) throw await unusable(dir, child.pid);
    if (
      childExit !== undefined &&
      childExit !== SERVER_EXIT.notStarted &&
      Date.now() - exitedAt > RACE_GRACE_MS
    ) {
      throw unavailable(dir, `the lease server exited with code ${childExit}; see ${join(dir, LOG_FILE)}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  if (child.pid !== undefined && isProcessAlive(child.pid)) child.kill("SIGTERM");
  throw unavailable(dir, `no lease server answered within ${timeoutMs} ms; see ${join(dir, LOG_FILE)}`);
}

/**
 * Stops the state directory's server, if one runs, and waits until its process is gone. Returns
 * how it ended (the pid, and whether SIGTERM was enough), or null when none was running.
 */
export async function stopLeaseServer(
  stateDir: string,
  timeoutMs = 10_000,
): Promise<{ readonly pid: number; readonly killed: boolean } | null> {
  const record = await readServerRecord(resolve(stateDir));
  if (record === null || !isProcessAlive(record.pid)) return null;
  process.kill(record.pid, "SIGTERM");
  const giveUpAt = Date.now() + timeoutMs;
  while (isProcessAlive(record.pid)) {
    if (Date.now() > giveUpAt) {
      process.kill(record.pid, "SIGKILL");
      return { pid: record.pid, killed: true };
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return { pid: record.pid, killed: false };
}

function spawnServer(dir: string, idleMs: number) {
  const log = openSync(join(dir, LOG_FILE), "a", STATE_FILE_MODE);
  try {
    // The mode above applies only when the file is created; an older log is tightened too.
    fchmodSync(log, STATE_FILE_MODE);
    const child = spawn(process.execPath, [...daemonEntry(), dir, String(idleMs)], {
      detached: true,
      stdio: ["ignore", log, log],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
    });
    // Detached and unreferenced: the server outlives this process and serves the others.
    child.unref();
    return child;
  } finally {
    closeSync(log);
  }
}

/**
 * How to start the daemon. From the sources (this file is ensure.ts), our TypeScript through tsx
 * like the CLI, resolved from this package so it works whatever the current directory. From the
 * package's bundle (dist/cli.js), the daemon's own bundle next to it: no tsx at run time.
 */
function daemonEntry(): string[] {
  if (import.meta.url.endsWith(".ts")) {
    return ["--import", import.meta.resolve("tsx"), fileURLToPath(new URL("./daemon.ts", import.meta.url))];
  }
  return [fileURLToPath(new URL("./daemon.js", import.meta.url))];
}

/** The server's own one-line reason (daemon.ts writes it to the log), else a pointer to the log. */
async function unusable(dir: string, pid: number | undefined): Promise<ReplicatorError> {
  const log = join(dir, LOG_FILE);
  const prefix = `lease server ${pid} not started: `;
  const lines = (await readFile(log, "utf8").catch(() => "")).split("\n");
  const reason = lines.reverse().find((line) => line.startsWith(prefix));
  return new ReplicatorError(
    "STATE_DIR_UNUSABLE",
    reason?.slice(prefix.length) ?? `state directory ${dir} cannot be used by the lease server; see ${log}`,
    { details: { stateDir: dir, log } },
  );
}

function unavailable(dir: string, why: string, cause?: unknown): ReplicatorError {
  return new ReplicatorError("LEASE_STORE_UNAVAILABLE", `embedded lease store in ${dir}: ${why}`, {
    cause,
    details: { stateDir: dir },
  });
}
