/** Runs the kafka-mirror CLI in-process, capturing what it prints, for tests. */
import { PassThrough } from "node:stream";
import { runCli } from "../../lib/cli/main.js";

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
