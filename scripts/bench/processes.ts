/**
 * Child processes of the bench: the mirror worker (scripts/bench/mirror-worker.ts, built) and the kcat
 * pipeline, once to the end of the source or continuously. All are started and awaited here so
 * the bench's own timing code stays small.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FUNCTION_MALLOC_TUNABLES, FUNCTION_NODE_FLAGS } from "../../infra/node-flags.js";
import { functionsNode } from "../../test/helpers/functions-node.js";
import type { WorkerJob, WorkerReport } from "./mirror-worker.js";
import { GO_LINE, WARM_LINE } from "./worker-protocol.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Inside node_modules, so that the bundle's package imports resolve as the package's dist/ does. */
const BUILD_DIR = join(ROOT, "node_modules", ".cache", "kafka-mirror-bench");

/**
 * The Node the worker runs on: "functions" (the default) is the functions' release from the test
 * bed, so the bench measures what Lambda runs (the same worker used about a fifth less CPU on
 * Node 22 than on Node 20 here); "current" is the Node running the bench.
 */
export type WorkerNode = "functions" | "current";

export interface WorkerBuild {
  /** The build's directory, which the caller removes; the bundle is its `worker.js`. */
  readonly dir: string;
  /** The node binary the worker starts with. */
  readonly node: string;
  /** Its `node -v`. */
  readonly version: string;
}

/**
 * Builds the worker as the package builds the CLI (scripts/build.mjs: one ESM bundle of our code,
 * packages imported), into a directory of its own (a bench and the bench test may run at once):
 * the worker then runs on plain node, as `kafka-mirror run` and the functions do. Under tsx it
 * also paid for tsx's loader thread and a larger heap to mark.
 */
export function buildWorker(workerNode: WorkerNode): WorkerBuild {
  const node = workerNode === "current" ? process.execPath : functionsNodeOrHint();
  mkdirSync(BUILD_DIR, { recursive: true });
  const dir = mkdtempSync(join(BUILD_DIR, "worker-"));
  try {
    execFileSync(
      process.execPath,
      ["scripts/build.mjs", "--outdir", dir, "--entry", "worker=scripts/bench/mirror-worker.ts"],
      { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] },
    );
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const version = execFileSync(node, ["-v"], { encoding: "utf8" }).trim();
  return { dir, node, version };
}

function functionsNodeOrHint(): string {
  try {
    return functionsNode();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `${message}; or pass --worker-node current to run the worker on this Node (${process.version})`,
    );
  }
}

export interface RunningWorker {
  /** The worker process's pid. */
  readonly pid: number | undefined;
  /** Resolves with the worker's report once it exits (after `stop()` in continuous mode). */
  readonly report: Promise<WorkerReport>;
  /**
   * With WorkerJob.warmupShared: resolves with the records the warm-up copied once it is done; the
   * worker then waits for `go()`. Rejects if the worker exits first.
   */
  readonly warm: Promise<number>;
  /** The go-ahead for the measured copy after a shared warm-up. */
  go(): void;
  /** Closes the worker's stdin: a continuous worker finishes its batches and exits. */
  stop(): void;
  kill(): void;
}

/** The worker buildWorker() built, on its Node, with the V8 flags and malloc settings of the Lambda functions. */
export function startWorker(build: WorkerBuild, job: WorkerJob, cpuProfDir: string | null): RunningWorker {
  const args: string[] = [...FUNCTION_NODE_FLAGS];
  if (cpuProfDir !== null) args.push("--cpu-prof", "--cpu-prof-dir", cpuProfDir);
  args.push(join(build.dir, "worker.js"));
  const child = spawn(build.node, args, {
    env: {
      ...process.env,
      BENCH_WORKER: JSON.stringify(job),
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      GLIBC_TUNABLES: FUNCTION_MALLOC_TUNABLES,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let warmed: (records: number) => void = () => undefined;
  const warm = new Promise<number>((resolve) => {
    warmed = resolve;
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    const line = stdout.split("\n").find((l) => l.startsWith(WARM_LINE));
    if (line !== undefined) warmed(Number(line.slice(WARM_LINE.length)));
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
    pid: child.pid,
    report,
    warm: warmOrExit(warm, report),
    go: () => child.stdin?.write(`${GO_LINE}\n`),
    stop: () => child.stdin?.end(),
    kill: () => {
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

/** `warm`, or the report's error (or a missing warm-up's) when the worker exits first. */
function warmOrExit(warm: Promise<number>, report: Promise<WorkerReport>): Promise<number> {
  const exited = report.then(() => {
    throw new Error("the worker exited before saying it was warm");
  });
  const first = Promise.race([warm, exited]);
  // Awaited only with a shared warm-up; without one, the exit must not surface as unhandled.
  first.catch(() => undefined);
  return first;
}

export interface KcatPipelineOptions {
  readonly sourceBrokers: readonly string[];
  readonly targetBrokers: readonly string[];
  readonly sourceTopic: string;
  readonly targetTopic: string;
}

export interface KcatPipelineRun {
  /** From spawn to the producer's exit (all deliveries acknowledged). */
  readonly elapsedMs: number;
  /** User + system CPU of both kcat processes (bash's `times` for its waited children). */
  readonly cpuSeconds: number;
}

/** `kcat -C -e | kcat -P` with keys (tab-delimited) and acks=all; librdkafka's defaults otherwise. */
export async function runKcatPipeline(opts: KcatPipelineOptions): Promise<KcatPipelineRun> {
  const started = performance.now();
  const pipeline = `${kcatConsume(opts, ["-e"])} | ${kcatProduce(opts)}`;
  // `times` prints the shell's, then its children's user and system time: the children are the
  // two kcat processes (each exec'd by a subshell of the pipeline).
  const child = spawn("bash", ["-c", `set -o pipefail; ${pipeline}; rc=$?; times >&2; exit $rc`], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, LC_ALL: "C" },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const code = await exited(child);
  const elapsedMs = performance.now() - started;
  if (code !== 0) throw new Error(`kcat pipeline exited with ${code}: ${stderr.trim()}`);
  const children = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(stderr);
  if (children === null) throw new Error(`no CPU times from the kcat pipeline's shell: ${stderr.trim()}`);
  const [, um, us, sm, ss] = children.map(Number) as [number, number, number, number, number];
  return { elapsedMs, cpuSeconds: um * 60 + us + sm * 60 + ss };
}

export interface ContinuousPipeline {
  /** Kills the pipeline's shell; both kcat processes die with it. */
  stop(): Promise<void>;
}

/**
 * `kcat -C -u | kcat -P` that keeps copying until stopped (the latency run). `-u`: the consumer
 * writes each record as it gets it, where stdio would hold them in its pipe buffer. Every process
 * runs under `setpriv --pdeathsig KILL` (as the test bed's JVMs do): the shell dies with the
 * bench, the kcat processes with the shell, so none outlives a bench that was itself killed.
 */
export function startKcatPipeline(opts: KcatPipelineOptions): ContinuousPipeline {
  const orphanSafe = (command: string): string => `setpriv --pdeathsig KILL -- ${command}`;
  const pipeline = `${orphanSafe(kcatConsume(opts, ["-u"]))} | ${orphanSafe(kcatProduce(opts))}`;
  const child = spawn("setpriv", ["--pdeathsig", "KILL", "--", "bash", "-c", pipeline], { stdio: "ignore" });
  const done = exited(child);
  return {
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGKILL");
      await done;
    },
  };
}

function kcatConsume(opts: KcatPipelineOptions, extra: readonly string[]): string {
  return [
    "kcat -C -q",
    ...extra,
    `-o beginning -K '\\t' -b ${opts.sourceBrokers.join(",")} -t ${opts.sourceTopic}`,
  ].join(" ");
}

function kcatProduce(opts: KcatPipelineOptions): string {
  return `kcat -P -q -K '\\t' -X acks=all -b ${opts.targetBrokers.join(",")} -t ${opts.targetTopic}`;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code));
  });
}
