/**
 * `npm run bench -- --kafka real`: kcat's pipe, MirrorMaker 2 and kafka-mirror copy the same data
 * between the same two real Apache Kafka 4.1.2 clusters (full JIT, 1 or 3 brokers each) in one
 * run, one tool after the other (real-tools.ts). The fairness rules:
 * - the same source data, written once; every tool copies all of it with acks=all, each with its
 *   own defaults otherwise (kcat: librdkafka's; MM2: the settings mirror-maker2-config.ts
 *   documents, exactly-once on, one task; kafka-mirror: one worker, default config, fenced writes);
 * - each copy starts on a target that holds no other copy: the previous tool's target topics are
 *   deleted and the tool's own created empty (as the mock bench deletes kcat's copy first);
 * - one watch times every copy the same way, from its target (progress.ts): the rate is all
 *   records over the window from the last sample that saw none to the first that saw all, so a
 *   tool's startup (MM2's Connect group and tasks: seconds) is reported apart, not in its rate;
 * - CPU per GiB: kcat's two processes over their whole run; MM2's JVM over the copy window
 *   (/proc/<pid>/stat); the mirror's worker over replicate() (its planning and caught-up check
 *   included, so it is counted a little against us);
 * - latency: a producer at a fixed rate into a source topic of the tool's own while the tool runs
 *   continuously, delay from source timestamp to read_committed arrival; the run fails when the
 *   producer could not hold the rate (latency.ts).
 * Rates of one run are comparable; across runs they are not: the machine is shared.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stopLeaseServer } from "../../lib/dynamodb/embedded/ensure.js";
import { type RealKafka, startRealKafka } from "../../test/helpers/real-kafka.js";
import { partitionShare, writeDataSet } from "./data.js";
import type { BenchOptions } from "./options.js";
import { buildWorker } from "./processes.js";
import {
  latencyTopic,
  runKcat,
  runMirror,
  runMirrorMaker2,
  type ToolContext,
  type ToolRun,
} from "./real-tools.js";
import { describeMachine } from "./run.js";
import { digestTopic } from "./verify.js";

export interface RealBenchResult {
  readonly options: BenchOptions;
  readonly machine: string;
  /** The Node version kafka-mirror's worker ran on (BenchOptions.workerNode). */
  readonly workerNode: string;
  readonly records: number;
  readonly payloadBytes: number;
  readonly produceRps: number;
  readonly kcat: ToolRun;
  readonly mm2: ToolRun;
  readonly mirror: ToolRun;
}

const DATA_TOPIC = "bench-data";

export async function runRealBench(
  options: BenchOptions,
  log: (line: string) => void,
): Promise<RealBenchResult> {
  const clusters: RealKafka[] = [];
  // Built first: a build that fails leaves nothing behind.
  const build = buildWorker(options.workerNode);
  const stateDir = await mkdtemp(join(tmpdir(), "kafka-mirror-bench-"));
  try {
    const { brokers, partitions } = options;
    log(`starting two ${brokers}-broker Apache Kafka 4.1.2 clusters (full JIT)`);
    const started = await Promise.allSettled([
      startRealKafka({ brokers, quickJit: false }),
      startRealKafka({ brokers, quickJit: false }),
    ]);
    for (const s of started) if (s.status === "fulfilled") clusters.push(s.value);
    const [source, target] = started.map((s) => {
      if (s.status === "rejected") throw s.reason;
      return s.value;
    }) as [RealKafka, RealKafka];
    await source.createTopic(DATA_TOPIC, partitions);
    for (const tool of ["kcat", "mm2", "mirror"] as const)
      await source.createTopic(latencyTopic(tool), partitions);

    const produceRps = await writeDataSet(source.bootstrapServers, DATA_TOPIC, partitions, options, log);
    const sourceDigests = await digestTopic(source, DATA_TOPIC, partitions);
    const ctx: ToolContext = {
      options,
      source,
      target,
      dataTopic: DATA_TOPIC,
      expected: Array.from({ length: partitions }, (_, p) => partitionShare(options.records, partitions, p)),
      sourceDigests,
      stateDir,
      build,
      log,
    };
    const kcat = await runKcat(ctx);
    const mm2 = await runMirrorMaker2(ctx);
    const mirror = await runMirror(ctx);
    return {
      options,
      machine: describeMachine(build),
      workerNode: build.version,
      records: options.records,
      payloadBytes: sourceDigests.reduce((sum, d) => sum + d.bytes, 0),
      produceRps,
      kcat,
      mm2,
      mirror,
    };
  } finally {
    await Promise.allSettled([...clusters.map((c) => c.stop()), stopLeaseServer(stateDir)]);
    await Promise.all([stateDir, build.dir].map((dir) => rm(dir, { recursive: true, force: true })));
  }
}
