/**
 * The state directory's record of the running lease server: `server.json` names its process and
 * port. It is only a hint: a reader trusts it after checking that the process is alive and the
 * port answers, because a server that was killed leaves the file behind.
 */

import { readFile, rename, rm, writeFile } from "node:fs/promises";
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
  await writeFile(tmp, `${JSON.stringify(record)}\n`);
  await rename(tmp, join(stateDir, SERVER_FILE));
}

/** Removes the record only if it still names `pid`: a newer server's record stays. */
export async function removeServerRecord(stateDir: string, pid: number): Promise<void> {
  const current = await readServerRecord(stateDir);
  if (current?.pid === pid) await rm(join(stateDir, SERVER_FILE), { force: true });
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive but someone else's; it still holds whatever it holds.
    return (error as NodeJS.ErrnoException).code === "EPERM";
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
