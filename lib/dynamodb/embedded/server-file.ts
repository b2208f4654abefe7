/**
 * The state directory: `server.json` names the running lease server's process and port, and
 * `secret` holds the random token every request to that server must carry.
 *
 * The record is only a hint: a reader trusts it after checking that the process is alive and the
 * port answers, because a server that was killed leaves the file behind.
 *
 * Who may use the store: the directory is 0700 and its files 0600, so only its owner can read
 * the secret. The loopback port is open to every local user, so the secret (not the port) is
 * what keeps another user's process from reading or rewriting checkpoints.
 */

import { randomBytes } from "node:crypto";
import { link, readFile, rename, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";

export interface ServerRecord {
  readonly pid: number;
  readonly port: number;
}

export const SERVER_FILE = "server.json";
/** LevelDB's directory inside the state directory. */
export const DATA_DIR = "leases";
export const LOG_FILE = "server.log";
export const SECRET_FILE = "secret";
/** The request header that carries the directory's secret. */
export const SECRET_HEADER = "x-kafka-mirror-secret";
export const STATE_DIR_MODE = 0o700;

/**
 * How the server process (daemon.ts) tells the process that started it why it did not start.
 * Any other failure exits `notStarted`: most often a racing server won LevelDB's lock.
 */
export const SERVER_EXIT = {
  notStarted: 3,
  /** STATE_DIR_UNUSABLE: waiting for it to start would only repeat the failure. */
  stateDirUnusable: 4,
} as const;
export const STATE_FILE_MODE = 0o600;

/**
 * The directory's secret, created on first use. Several processes may race to create it: each
 * writes a candidate to its own file and links it into place, so the secret appears whole and
 * exactly one candidate wins; the others read the winner's.
 */
export async function readOrCreateSecret(stateDir: string): Promise<string> {
  const file = join(stateDir, SECRET_FILE);
  const candidate = join(stateDir, `${SECRET_FILE}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  await writeFile(candidate, randomBytes(32).toString("hex"), { mode: STATE_FILE_MODE });
  try {
    await link(candidate, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    await rm(candidate, { force: true });
  }
  return (await readFile(file, "utf8")).trim();
}

export async function readServerRecord(stateDir: string): Promise<ServerRecord | null> {
  let text: string;
  try {
    text = await readFile(join(stateDir, SERVER_FILE), "utf8");
  } catch {
    return null;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null) return null;
    const { pid, port } = parsed as Record<string, unknown>;
    if (!Number.isSafeInteger(pid) || !Number.isSafeInteger(port)) return null;
    return { pid: pid as number, port: port as number };
  } catch {
    // A torn or hand-edited file is as good as none: the server rewrites it when started.
    return null;
  }
}

/** Written to a temporary name and renamed, so a reader never sees half a file. */
export async function writeServerRecord(stateDir: string, record: ServerRecord): Promise<void> {
  const tmp = join(stateDir, `${SERVER_FILE}.${record.pid}.tmp`);
  await writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: STATE_FILE_MODE });
  await rename(tmp, join(stateDir, SERVER_FILE));
}

/** Removes the record only if it still names `pid`: a newer server's record stays. */
export async function removeServerRecord(stateDir: string, pid: number): Promise<void> {
  const current = await readServerRecord(stateDir);
  if (current?.pid === pid) await rm(join(stateDir, SERVER_FILE), { force: true });
}

/** Sends signal 0: throws ESRCH when no such process exists, EPERM when it is another user's. */
export type ProcessProbe = (pid: number, signal: 0) => void;

/**
 * True when `pid` is a live process of ours. EPERM means the pid now belongs to another user:
 * our server runs as us, so that process is not it (the pid was reused after ours died).
 */
export function isProcessAlive(
  pid: number,
  probe: ProcessProbe = (p, signal) => process.kill(p, signal),
): boolean {
  try {
    probe(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when the process is alive and its port accepts a connection within `timeoutMs`. */
export async function isServing(record: ServerRecord, timeoutMs = 1_000): Promise<boolean> {
  if (!isProcessAlive(record.pid)) return false;
  return new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: record.port });
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
