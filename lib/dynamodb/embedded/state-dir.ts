/**
 * Creating the state directory (see server-file.ts for what it holds), with a `mkdir -p` that
 * always ends.
 *
 * Node's own `mkdir(path, { recursive: true })` never returns when a parent exists but refuses
 * to hold a new directory with ENOENT, as procfs does (`/proc/nope`) and a dangling symlink
 * does: it makes the parent (EEXIST), tries the child again (ENOENT) and goes round for ever,
 * about 1,300 times a second. `kafka-mirror status --state-dir /proc/nope` spun like that for
 * ten minutes. The walk here makes each parent at most once, so such a path fails at once.
 */
import { chmod, mkdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import { DATA_DIR, STATE_DIR_MODE } from "./server-file.js";

/** fs failures that may pass by themselves: out of file descriptors, a busy or interrupted call. */
const TRANSIENT_FS_CODES: ReadonlySet<string> = new Set(["EMFILE", "ENFILE", "EAGAIN", "EBUSY", "EINTR"]);

/** What an errno says about the state directory, for the one line the operator reads. */
const FS_REASONS: Readonly<Record<string, string>> = {
  ENOENT: "a parent is missing or cannot hold directories",
  ENOTDIR: "a file stands where a directory must be",
  EACCES: "permission denied",
  EPERM: "not permitted: another user's directory, or a file system that refuses it",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  ENAMETOOLONG: "path too long",
  ELOOP: "too many symbolic links",
  EISDIR: "a directory stands where a file must be",
};

/**
 * Creates the state directory, or tightens an existing one, to 0700. chmod fails with EPERM on
 * a directory someone else owns: such a directory is not ours to keep leases in. LevelDB's
 * directory is made here too, so a file in its place fails now with its name, not later inside
 * the server process as "Database is not open".
 */
export async function prepareStateDir(stateDir: string): Promise<void> {
  await makeDirectory(stateDir, STATE_DIR_MODE);
  await chmod(stateDir, STATE_DIR_MODE);
  await makeDirectory(join(stateDir, DATA_DIR), STATE_DIR_MODE);
}

/** `mkdir -p path`: each missing parent is made once, then `path` is tried once more, never again. */
export async function makeDirectory(path: string, mode: number): Promise<void> {
  try {
    await mkdir(path, { mode });
    return;
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return requireDirectory(path);
    if (errnoOf(error) !== "ENOENT" || dirname(path) === path) throw error;
  }
  await makeDirectory(dirname(path), mode);
  try {
    await mkdir(path, { mode });
  } catch (error) {
    // A second ENOENT, with the parent there, is final: the parent cannot hold directories.
    if (errnoOf(error) !== "EEXIST") throw error;
    await requireDirectory(path);
  }
}

/** Something is at `path` already (made by a racing process, or a file): it must be a directory. */
async function requireDirectory(path: string): Promise<void> {
  if ((await stat(path)).isDirectory()) return;
  throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), {
    code: "ENOTDIR",
    syscall: "mkdir",
    path,
  });
}

export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * A failure to create or use the state directory as a ReplicatorError. Most are the operator's
 * to fix (STATE_DIR_UNUSABLE, not retryable: trying again only repeats them); a transient one
 * (EMFILE, EBUSY...) stays LEASE_STORE_UNAVAILABLE, retryable. A ReplicatorError passes as is.
 */
export function stateDirError(stateDir: string, error: unknown): ReplicatorError {
  if (isReplicatorError(error)) return error;
  const code = errnoOf(error);
  const { syscall, path } = (error ?? {}) as NodeJS.ErrnoException;
  const text = error instanceof Error ? error.message : String(error);
  if (code === undefined || TRANSIENT_FS_CODES.has(code)) {
    return new ReplicatorError(
      "LEASE_STORE_UNAVAILABLE",
      `embedded lease store in ${stateDir}: cannot prepare the state directory: ${text}`,
      { cause: error, details: { stateDir, ...(code === undefined ? {} : { errno: code }) } },
    );
  }
  const where = `${syscall ?? "using"} ${path ?? stateDir}`;
  return new ReplicatorError(
    "STATE_DIR_UNUSABLE",
    `state directory ${stateDir} cannot be used: ${where}: ${code} (${FS_REASONS[code] ?? text}); ` +
      "it must be a directory this user can create, or one it owns and can write",
    { cause: error, details: { stateDir, path: path ?? stateDir, syscall, errno: code } },
  );
}

/**
 * Whether `stateDir` holds an embedded store (its data directory), looked at without creating
 * anything: false when nothing is there, so a command that only reads can say so instead of
 * starting an empty store. A path that cannot be a store (a file in the way, no permission)
 * throws STATE_DIR_UNUSABLE as creating it would.
 */
export async function hasEmbeddedStore(stateDir: string): Promise<boolean> {
  const data = join(stateDir, DATA_DIR);
  try {
    if ((await stat(data)).isDirectory()) return true;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw stateDirError(stateDir, error);
  }
  const notDirectory = Object.assign(new Error(`ENOTDIR: not a directory, stat '${data}'`), {
    code: "ENOTDIR",
    syscall: "stat",
    path: data,
  });
  throw stateDirError(stateDir, notDirectory);
}
