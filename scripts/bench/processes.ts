/**
 * Child processes of the bench: the mirror worker (scripts/bench/mirror-worker.ts) and the kcat
 * pipeline. Both are started and awaited here so the bench's own timing code stays small.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { WorkerJob, WorkerReport } from "./mirror-worker.js";

const WORKER_SCRIPT = fileURLToPath(new URL("./mirror-worker.ts", import.meta.url));

export interface RunningWorker {
  /** Resolves with the worker's report once it exits (after `stop()` in continuous mode). */
  readonly report: Promise<WorkerReport>;
  /** Closes the worker's stdin: a continuous worker finishes its batches and exits. */
  stop(): void;
  kill(): void;
}

export function startWorker(job: WorkerJob, cpuProfDir: string | null): RunningWorker {
  const args = ["--import", "tsx"];
  if (cpuProfDir !== null) args.push("--cpu-prof", "--cpu-prof-dir", cpuProfDir);
  args.push(WORKER_SCRIPT);
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      BENCH_WORKER: JSON.stringify(job),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  const live = process.env.BENCH_WORKER_LOG !== undefined;
  child.stderr?.on("data", (chunk: Buffer) => {
    if (live) process.stderr.write(chunk);
    else stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  child.stdin?.on("error", () => undefined);
  const report = exited(child).then((code) => {
    const line = stdout.trim().split("\n").at(-1);
    if (code !== 0 || line === undefined || line === "") {
      throw new Error(`bench worker exited with ${code}; stderr: ${stderr.trim()}`);
    }
    if (stderr.trim() !== "") process.stderr.write(stderr);
    return JSON.parse(line) as WorkerReport;
  });
  return {
    report,
    stop: () => child.stdin?.end(),
    kill: () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

export interface KcatPipelineOptions {
  readonly sourceBrokers: readonly string[];
  readonly targetBrokers: readonly string[];
  readonly sourceTopic: string;
  readonly targetTopic: string;
}

/**
 * `kcat -C -e | kcat -P` with keys (tab-delimited) and acks=all; librdkafka's defaults otherwise.
 * Resolves with the wall time from spawn to the producer's exit (all deliveries acknowledged).
 */
export async function runKcatPipeline(opts: KcatPipelineOptions): Promise<number> {
  const consume = `kcat -C -q -e -o beginning -K '\\t' -b ${opts.sourceBrokers.join(",")} -t ${opts.sourceTopic}`;
  const produce = `kcat -P -q -K '\\t' -X acks=all -b ${opts.targetBrokers.join(",")} -t ${opts.targetTopic}`;
  const started = performance.now();
  const child = spawn("bash", ["-c", `set -o pipefail; ${consume} | ${produce}`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const code = await exited(child);
  const elapsed = performance.now() - started;
  if (code !== 0) throw new Error(`kcat pipeline exited with ${code}: ${stderr.trim()}`);
  return elapsed;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code));
  });
}
