/**
 * One bench run on freshly started clusters: write the data, time the kcat pipeline, time the
 * mirror worker and check its copy record for record, then measure latency at a fixed rate.
 * Everything it starts is stopped before it returns or throws.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { stopLeaseServer } from "../../lib/dynamodb/embedded/ensure.js";
import { startMockKafka } from "../../test/helpers/mock-kafka.js";
import {
  type CostEstimate,
  DEFAULT_PRICES,
  type DynamoDbUnitsPerGib,
  estimateCost,
  type PriceInputs,
} from "./cost.js";
import { writeDataSet } from "./data.js";
import { assertRateHeld, type LatencyResult, measureLatency } from "./latency.js";
import type { WorkerReport } from "./mirror-worker.js";
import type { BenchOptions } from "./options.js";
import {
  buildWorker,
  type RunningWorker,
  runKcatPipeline,
  startWorker,
  type WorkerBuild,
} from "./processes.js";
import { countRecords, digestTopic, sameCopy, storedBytes } from "./verify.js";

export interface BenchResult {
  readonly options: BenchOptions;
  readonly machine: string;
  /** The Node version the worker ran on (BenchOptions.workerNode). */
  readonly workerNode: string;
  readonly records: number;
  readonly payloadBytes: number;
  readonly produceRps: number;
  readonly kcat: {
    readonly elapsedMs: number;
    readonly rps: number;
    readonly copied: number;
    /** User + system CPU of the pipeline's two kcat processes over their whole run. */
    readonly cpuSeconds: number;
  } | null;
  readonly mirror: WorkerReport & {
    readonly rps: number;
    readonly verified: boolean;
    readonly copied: number;
  };
  readonly latency: LatencyResult | null;
  readonly cpuSecondsPerGib: number;
  /** The same over the second half of the copy (WorkerReport.secondHalf). */
  readonly secondHalfCpuSecondsPerGib: number | null;
  /** kcat's CPU over the same payload: what a C client spends on this machine, for comparison. */
  readonly kcatCpuSecondsPerGib: number | null;
  readonly prices: PriceInputs;
  /** The lease store's DynamoDB capacity per GiB copied, at the measured rate. */
  readonly dynamodbUnitsPerGib: DynamoDbUnitsPerGib;
  readonly cost: CostEstimate;
}

/** Each cluster keeps every byte of the run: the mock drops a partition's oldest data beyond this. */
const PARTITION_MAX_BYTES = 4 * 1024 ** 3;
const DATA_TOPIC = "bench-data";
const KCAT_TOPIC = "bench-kcat";
const LATENCY_TOPIC = "bench-latency";
const WARMUP_TOPIC = "bench-warmup";

export async function runBench(options: BenchOptions, log: (line: string) => void): Promise<BenchResult> {
  const started: { stop(): Promise<void> }[] = [];
  const workers: RunningWorker[] = [];
  // Built first: a build that fails leaves nothing behind.
  const build = buildWorker(options.workerNode);
  // The embedded lease store of `kafka-mirror run`: a dynalite server the first worker starts.
  const stateDir = await mkdtemp(join(tmpdir(), "kafka-mirror-bench-"));
  try {
    log("starting two 3-broker mock Kafka clusters");
    // Held fetches are answered when data arrives, as Kafka does (startMockKafka's default): else
    // the latency run measures the mock holding an empty answer for batch.maxWaitMs (500 ms).
    const [source, target] = await Promise.all([
      startMockKafka({ partitionMaxBytes: PARTITION_MAX_BYTES }),
      startMockKafka({ partitionMaxBytes: PARTITION_MAX_BYTES }),
    ]);
    started.push(source, target);
    // The mock's brokers are 1..3.
    if (options.targetRttMs > 0)
      for (const broker of [1, 2, 3]) await target.setRtt(broker, options.targetRttMs);
    const { partitions } = options;
    await source.createTopic(DATA_TOPIC, partitions);
    await source.createTopic(LATENCY_TOPIC, partitions);
    await target.createTopic(DATA_TOPIC, partitions);
    await target.createTopic(KCAT_TOPIC, partitions);
    await target.createTopic(LATENCY_TOPIC, partitions);

    const job = {
      mode: "once",
      sourceBrokers: source.bootstrapServers,
      targetBrokers: target.bootstrapServers,
      topic: DATA_TOPIC,
      stateDir,
      copy: options.copy,
      compression: options.targetCompression,
      ...(options.warmupRecords > 0 ? { warmupTopic: WARMUP_TOPIC, warmupShared: options.warmupShared } : {}),
    } as const;
    // A shared warm-up (--warmup-shared) is copied before the measured data is written: the
    // worker's replicator copies all it finds. The warm-up's copy stays in the target either way.
    let warm: RunningWorker | null = null;
    if (options.warmupRecords > 0) {
      await source.createTopic(WARMUP_TOPIC, partitions);
      await target.createTopic(WARMUP_TOPIC, partitions);
      log("the worker's warm-up data, on a topic of its own:");
      const warmup = { ...options, records: options.warmupRecords };
      await writeDataSet(source.bootstrapServers, WARMUP_TOPIC, partitions, warmup, log);
      if (options.warmupShared) {
        log(`kafka-mirror worker: warm-up copy of ${options.warmupRecords} records (not measured)`);
        warm = startWorker(build, job, options.cpuProfDir);
        workers.push(warm);
        await warm.warm;
      }
    }

    const produceRps = await writeDataSet(source.bootstrapServers, DATA_TOPIC, partitions, options, log);

    let kcat: BenchResult["kcat"] = null;
    if (!options.skipKcat) {
      log("kcat -C -e | kcat -P");
      const { elapsedMs, cpuSeconds } = await runKcatPipeline({
        sourceBrokers: source.bootstrapServers,
        targetBrokers: target.bootstrapServers,
        sourceTopic: DATA_TOPIC,
        targetTopic: KCAT_TOPIC,
      });
      const copied = await countRecords(target, KCAT_TOPIC, partitions);
      if (copied !== options.records) throw new Error(`kcat copied ${copied} of ${options.records} records`);
      kcat = { elapsedMs, rps: options.records / (elapsedMs / 1000), copied, cpuSeconds };
      // Each copy starts from a target that holds no other copy: librdkafka's mock spends more
      // per produce request the more it holds (measured: 1.8 s of the target mock's CPU during
      // the mirror's copy with kcat's copy still there, 0.4 s with it deleted), which would
      // bill the mock's slowdown to whichever copy runs second.
      await target.deleteTopic(KCAT_TOPIC);
    }

    const warmth =
      options.warmupRecords === 0
        ? ""
        : warm === null
          ? "; warm-up copy first, by a replicator of its own, not measured"
          : "; the warm-up's replicator, mirroring that topic too";
    log(`kafka-mirror worker (run --once: one process, stop when caught up, acks=all${warmth})`);
    let once = warm;
    if (once === null) {
      once = startWorker(build, job, options.cpuProfDir);
      workers.push(once);
    } else once.go();
    const report = await once.report;

    log("verifying the mirror's copy record for record");
    const [sourceDigests, targetDigests] = await Promise.all([
      digestTopic(source, DATA_TOPIC, partitions),
      digestTopic(target, DATA_TOPIC, partitions),
    ]);
    const copied = targetDigests.reduce((sum, d) => sum + d.records, 0);
    const payloadBytes = sourceDigests.reduce((sum, d) => sum + d.bytes, 0);
    const verified = report.errors === 0 && sameCopy(sourceDigests, targetDigests, options.records);
    if (!verified) {
      log(
        `copy differs: worker errors ${report.errors}; source ${JSON.stringify(sourceDigests)}; target ${JSON.stringify(targetDigests)}`,
      );
    }
    const mirror = { ...report, rps: report.records / (report.elapsedMs / 1000), verified, copied };
    // Per GiB the worker wrote: the source's batches in batches mode, its own in records mode.
    // Compressed by target.compression they are far fewer (the bench's values compress many
    // times over): then per GiB of the source's batches.
    const sourceBytes =
      options.targetCompression === "none" ? report.bytes : await storedBytes(source, DATA_TOPIC, partitions);
    const sourcePerWritten = sourceBytes / report.bytes;

    let latency: LatencyResult | null = null;
    if (!options.skipLatency) {
      // The latency run, too, starts on clusters that hold no other data, for the reason above.
      await Promise.all([source.deleteTopic(DATA_TOPIC), target.deleteTopic(DATA_TOPIC)]);
      log(
        `latency: ${options.rate} records/s for ${options.latencySeconds} s with a continuously running worker`,
      );
      const continuous = startWorker(
        build,
        {
          mode: "continuous",
          sourceBrokers: source.bootstrapServers,
          targetBrokers: target.bootstrapServers,
          topic: LATENCY_TOPIC,
          stateDir,
          copy: options.copy,
          compression: options.targetCompression,
        },
        null,
      );
      workers.push(continuous);
      try {
        latency = await measureLatency({
          sourceBrokers: source.bootstrapServers,
          targetBrokers: target.bootstrapServers,
          topic: LATENCY_TOPIC,
          partitions,
          recordBytes: options.recordBytes,
          rate: options.rate,
          seconds: options.latencySeconds,
          lingerMs: options.lingerMs,
        });
      } finally {
        continuous.stop();
        await continuous.report.catch(() => undefined);
      }
      assertRateHeld(latency, options.rate, "latency run");
    }

    const gib = sourceBytes / 2 ** 30;
    const bytesPerSecond = sourceBytes / (report.elapsedMs / 1000);
    const dynamodbUnitsPerGib = {
      read: report.dynamodb.readUnits / gib,
      write: report.dynamodb.writeUnits / gib,
    };
    return {
      options,
      machine: describeMachine(build),
      workerNode: build.version,
      records: options.records,
      payloadBytes,
      produceRps,
      kcat,
      mirror,
      latency,
      cpuSecondsPerGib: report.cpuMs / 1000 / gib,
      secondHalfCpuSecondsPerGib:
        report.secondHalf === null
          ? null
          : report.secondHalf.cpuMs / 1000 / ((report.secondHalf.bytes * sourcePerWritten) / 2 ** 30),
      kcatCpuSecondsPerGib: kcat === null ? null : kcat.cpuSeconds / gib,
      prices: DEFAULT_PRICES,
      dynamodbUnitsPerGib,
      cost: estimateCost(bytesPerSecond, dynamodbUnitsPerGib, options.lambdaMemoryMb),
    };
  } finally {
    for (const worker of workers) worker.kill();
    await Promise.allSettled([...started.map((s) => s.stop()), stopLeaseServer(stateDir)]);
    await Promise.all([stateDir, build.dir].map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

export function describeMachine(build: WorkerBuild): string {
  const model = cpus()[0]?.model.trim() ?? "unknown CPU";
  const worker =
    build.node === process.execPath ? "the same Node" : `Node ${build.version} (the functions' release)`;
  return `${availableParallelism()} x ${model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, bench on Node ${process.version}, worker on ${worker}`;
}
