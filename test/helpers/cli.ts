/** Runs the kafka-mirror CLI, in-process or as the real bin in a child process, for tests. */
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { runCli } from "../../lib/cli/main.js";

/** The executable a user runs (`npx kafka-mirror`). */
export const CLI_BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "kafka-mirror.js");

/** util-linux's setpriv (scripts/setup-testbed.sh installs it): root without DAC override. */
const DROP_ROOT_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"];

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
  /**
   * As root, run without the capabilities that let root write where the mode bits say no (so a
   * 0555 directory refuses it). Not as another user: that user may not be able to read the
   * checkout (a clone under /root is 0700).
   */
  readonly withoutRootOverride?: boolean;
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
    const command = [process.execPath, options.bin ?? CLI_BIN, ...args];
    const [file, ...argv] =
      options.withoutRootOverride === true ? [...DROP_ROOT_OVERRIDE, ...command] : command;
    const child = spawn(file as string, argv, {
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
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
