/** Runs the kafka-mirror CLI, in-process or as the real bin in a child process, for tests. */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { runCli } from "../../lib/cli/main.js";

/** The executable a user runs (`npx kafka-mirror`). */
export const CLI_BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "kafka-mirror.js");

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runCliCaptured(args: readonly string[]): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  stderr.on("data", (c: Buffer) => {
    err += c.toString("utf8");
  });
  const code = await runCli(args, { stdout, stderr }, new AbortController().signal);
  return { code, stdout: out, stderr: err };
}

export interface SpawnedCliResult {
  /** null when the process was killed by a signal (`killAfterMs` included). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** From spawn to exit. */
  readonly elapsedMs: number;
}

export interface SpawnCliOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly bin?: string;
  /** Run as this user (the test runs as root): to meet a directory only root could write. */
  readonly user?: { readonly uid: number; readonly gid: number };
  /** SIGKILL after this long, so a CLI that never ends fails its test instead of hanging it. */
  readonly killAfterMs?: number;
}

/**
 * Runs bin/kafka-mirror.js (or another `bin`, such as an installed package's) in a child process
 * of its own, as a user would, until it exits.
 */
export function spawnCli(args: readonly string[], options: SpawnCliOptions = {}): Promise<SpawnedCliResult> {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(process.execPath, [options.bin ?? CLI_BIN, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.user === undefined ? {} : { uid: options.user.uid, gid: options.user.gid }),
    });
    const killer =
      options.killAfterMs === undefined
        ? undefined
        : setTimeout(() => child.kill("SIGKILL"), options.killAfterMs);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, elapsedMs: Date.now() - startedAt });
    });
  });
}
