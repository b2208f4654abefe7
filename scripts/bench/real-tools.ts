/**
 * The three copies of the real bench (real.ts), each on the same clusters and the same source
 * data: kcat's pipe, MirrorMaker 2 and kafka-mirror. Each starts with its target topics created
 * fresh and empty (the previous tool's copies deleted), is timed by the same watch (progress.ts),
 * and then copies a fixed-rate stream of its own for the latency run (latency.ts).
 */
import { launchMirrorMaker2 } from "../../test/helpers/mirror-maker2.js";
import { cpuSeconds, peakRssMiB } from "../../test/helpers/processes.js";
import type { RealKafka } from "../../test/helpers/real-kafka.js";
import type { PartitionDigest } from "./data.js";
import { assertRateHeld, type LatencyResult, measureLatency } from "./latency.js";
import type { BenchOptions } from "./options.js";
import { runKcatPipeline, startKcatPipeline, startWorker, type WorkerBuild } from "./processes.js";
import { type CopyWindow, watchCopy } from "./progress.js";
import { digestTopic, sameCopy } from "./verify.js";

export type ToolName = "kcat" | "mm2" | "mirror";

export interface ToolRun {
  readonly tool: ToolName;
  /** The copy as the watch saw it arrive on the target (the rate compared across tools). */
  readonly window: CopyWindow;
  /** User + system CPU seconds the copy cost (which span: ToolRun docs in real.ts' table). */
  readonly cpuSeconds: number;
  /** Record for record equal to the source (digests); null where only counted (kcat re-partitions). */
  readonly verified: boolean | null;
  readonly latency: LatencyResult;
  /** Peak RSS of the copying process; null for kcat (two short processes). */
  readonly rssMb: number | null;
  /** What the tool says of itself: kcat's wall time, the worker's replicate(), MM2's start. */
  readonly own: Readonly<Record<string, number>>;
}

export interface ToolContext {
  readonly options: BenchOptions;
  readonly source: RealKafka;
  readonly target: RealKafka;
  readonly dataTopic: string;
  /** The source's records per partition (indexes 0..n-1). */
  readonly expected: readonly number[];
  readonly sourceDigests: readonly PartitionDigest[];
  readonly stateDir: string;
  /** The worker's build (buildWorker()). */
  readonly build: WorkerBuild;
  readonly log: (line: string) => void;
}

/** Source topic of a tool's latency run: its own, so no tool copies another's stream. */
export function latencyTopic(tool: ToolName): string {
  return `bench-latency-${tool}`;
}

const COPY_TIMEOUT_MS = 30 * 60_000;
/** kcat's producer forwards a record once 128 more bytes follow it (latency.ts, `nudgeMs`). */
const KCAT_NUDGE_MS = 100;

export async function runKcat(ctx: ToolContext): Promise<ToolRun> {
  const { options, source, target, dataTopic } = ctx;
  await freshTargets(ctx, "kcat");
  ctx.log("kcat -C -e | kcat -P");
  const watch = watchCopy({
    targetBrokers: target.bootstrapServers,
    topic: dataTopic,
    expected: ctx.expected,
    method: "offsets",
    timeoutMs: COPY_TIMEOUT_MS,
  });
  const pipe = { sourceBrokers: source.bootstrapServers, targetBrokers: target.bootstrapServers };
  const [run, window] = await Promise.all([
    runKcatPipeline({ ...pipe, sourceTopic: dataTopic, targetTopic: dataTopic }),
    watch,
  ]);
  await target.deleteTopic(dataTopic);

  ctx.log(`latency: kcat -C -u | kcat -P, ${options.rate} records/s for ${options.latencySeconds} s`);
  const topic = latencyTopic("kcat");
  const continuous = startKcatPipeline({ ...pipe, sourceTopic: topic, targetTopic: topic });
  const latency = await measureLatency({ ...latencyOptions(ctx, topic), nudgeMs: KCAT_NUDGE_MS }).finally(
    () => continuous.stop(),
  );
  assertRateHeld(latency, options.rate, "latency run (kcat)");
  await target.deleteTopic(topic);
  return {
    tool: "kcat",
    window,
    cpuSeconds: run.cpuSeconds,
    verified: null,
    latency,
    rssMb: null,
    own: { elapsedMs: run.elapsedMs },
  };
}

export async function runMirrorMaker2(ctx: ToolContext): Promise<ToolRun> {
  const { options, source, target, dataTopic } = ctx;
  await freshTargets(ctx, "mm2");
  ctx.log("MirrorMaker 2 (dedicated node, exactly-once, identity policy, tasks.max 1)");
  const topic = latencyTopic("mm2");
  const mm2 = await launchMirrorMaker2({
    source,
    target,
    // Both topics from the start: MM2 looks for new topics only every 10 minutes.
    topics: `${dataTopic}|${topic}`,
    quickJit: false,
  });
  try {
    let failure: Error | undefined;
    mm2.ready.catch((error: unknown) => {
      failure = error instanceof Error ? error : new Error(String(error));
    });
    // The copy window's CPU time is the JVM's own, from /proc, between the window's two samples.
    const window = await watchCopy({
      targetBrokers: target.bootstrapServers,
      topic: dataTopic,
      expected: ctx.expected,
      method: "lastKey",
      cpuSeconds: () => cpuSeconds(mm2.pid),
      timeoutMs: COPY_TIMEOUT_MS,
      failed: () => failure,
    });
    await mm2.ready;
    const verified = await verifyCopy(ctx, "MirrorMaker 2");

    ctx.log(`latency: MirrorMaker 2, ${options.rate} records/s for ${options.latencySeconds} s`);
    const latency = await measureLatency(latencyOptions(ctx, topic));
    assertRateHeld(latency, options.rate, "latency run (MirrorMaker 2)");
    const rssMb = peakRssMiB(mm2.pid);
    await mm2.stop();
    await Promise.all([target.deleteTopic(dataTopic), target.deleteTopic(topic)]);
    return {
      tool: "mm2",
      window,
      cpuSeconds: window.cpuSeconds,
      verified,
      latency,
      rssMb,
      own: { startMs: mm2.startMs },
    };
  } finally {
    await mm2.kill();
  }
}

export async function runMirror(ctx: ToolContext): Promise<ToolRun> {
  const { options, source, target, dataTopic } = ctx;
  await freshTargets(ctx, "mirror");
  ctx.log("kafka-mirror worker (run --once: one process, stop when caught up, acks=all)");
  const job = {
    sourceBrokers: source.bootstrapServers,
    targetBrokers: target.bootstrapServers,
    stateDir: ctx.stateDir,
    copy: options.copy,
    compression: options.targetCompression,
  };
  const watch = watchCopy({
    targetBrokers: target.bootstrapServers,
    topic: dataTopic,
    expected: ctx.expected,
    method: "lastKey",
    timeoutMs: COPY_TIMEOUT_MS,
  });
  const once = startWorker(ctx.build, { ...job, mode: "once", topic: dataTopic }, null);
  let window: CopyWindow;
  let report: Awaited<typeof once.report>;
  try {
    [window, report] = await Promise.all([watch, once.report]);
  } finally {
    once.kill();
  }
  const verified = report.errors === 0 && (await verifyCopy(ctx, "kafka-mirror"));

  ctx.log(`latency: kafka-mirror, ${options.rate} records/s for ${options.latencySeconds} s`);
  const topic = latencyTopic("mirror");
  const continuous = startWorker(ctx.build, { ...job, mode: "continuous", topic }, null);
  let latency: LatencyResult;
  try {
    latency = await measureLatency(latencyOptions(ctx, topic));
  } finally {
    continuous.stop();
    await continuous.report.catch(() => undefined);
    continuous.kill();
  }
  assertRateHeld(latency, options.rate, "latency run (kafka-mirror)");
  return {
    tool: "mirror",
    window,
    // The worker's own count over replicate(): its planning and caught-up check included.
    cpuSeconds: report.cpuMs / 1000,
    verified,
    latency,
    rssMb: report.maxRssMb,
    own: {
      elapsedMs: report.elapsedMs,
      startupMs: report.startupMs,
      batches: report.batches,
      // The half's share of the bytes the worker counts (batch bytes in batches mode), so the
      // report can take it of the payload, as every tool's CPU per GiB is.
      ...(report.secondHalf === null
        ? {}
        : {
            secondHalfCpuMs: report.secondHalf.cpuMs,
            secondHalfShare: report.secondHalf.bytes / report.bytes,
          }),
    },
  };
}

/**
 * The tool's target topics, created empty, as many partitions as the source's (the previous
 * tool's were deleted: RealKafka.deleteTopic returns once no broker lists them).
 */
async function freshTargets(ctx: ToolContext, tool: ToolName): Promise<void> {
  const partitions = ctx.expected.length;
  await ctx.target.createTopic(ctx.dataTopic, partitions);
  await ctx.target.createTopic(latencyTopic(tool), partitions);
}

async function verifyCopy(ctx: ToolContext, what: string): Promise<boolean> {
  ctx.log(`verifying ${what}'s copy record for record`);
  const digests = await digestTopic(ctx.target, ctx.dataTopic, ctx.expected.length);
  const same = sameCopy(ctx.sourceDigests, digests, ctx.options.records);
  if (!same) ctx.log(`${what}'s copy differs: target ${JSON.stringify(digests)}`);
  return same;
}

function latencyOptions(ctx: ToolContext, topic: string) {
  const { options } = ctx;
  return {
    sourceBrokers: ctx.source.bootstrapServers,
    targetBrokers: ctx.target.bootstrapServers,
    topic,
    partitions: options.partitions,
    recordBytes: options.recordBytes,
    rate: options.rate,
    seconds: options.latencySeconds,
    lingerMs: options.lingerMs,
  };
}
