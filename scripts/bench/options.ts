/**
 * Bench options from the command line (`npm run bench -- --records 200000 --rate 5000`). Every
 * option has a default that reproduces the reference run; unknown or malformed options
 * are refused, so a typo cannot silently run the wrong bench.
 */
import { COMPRESSION_CODECS, type CompressionCodec } from "../../lib/config/compression.js";
import type { WorkerNode } from "./processes.js";

export type BenchKafka = "mock" | "real";

export interface BenchOptions {
  /**
   * Which clusters: librdkafka's mock (two 3-broker clusters; kcat and kafka-mirror), or real
   * Apache Kafka 4.1.2 (kcat, MirrorMaker 2 and kafka-mirror, see real.ts).
   */
  readonly kafka: BenchKafka;
  /** Brokers per real cluster (--kafka real only): 1, or 3 for RF 3 / min.isr 2. */
  readonly brokers: number;
  /** Records written to the source for the throughput runs. */
  readonly records: number;
  readonly partitions: number;
  /** Value size in bytes (keys are ~10 bytes on top). */
  readonly recordBytes: number;
  /** Upper bound of the source producer's batches; the mock serves one batch per fetch. */
  readonly sourceBatchBytes: number;
  /** Records per second of the latency run's producer. */
  readonly rate: number;
  /** How long the latency run produces, in seconds. */
  readonly latencySeconds: number;
  /** The producer of the latency run sends what accumulated every this many ms (its linger). */
  readonly lingerMs: number;
  /** Lambda memory size the cost estimate assumes. */
  readonly lambdaMemoryMb: number;
  /** Mock only: every target broker answers this much later (a target in another region). */
  readonly targetRttMs: number;
  /** Skip the kcat pipeline (ratio is then null). */
  readonly skipKcat: boolean;
  /** Skip the latency run (p50/p99 are then null). */
  readonly skipLatency: boolean;
  /** Write a V8 CPU profile of the mirror worker into this directory. */
  readonly cpuProfDir: string | null;
  /** The worker's target.copy: records decoded and stamped, or source batches passed through. */
  readonly copy: BenchCopy;
  /** The worker's target.compression (with "batches", any other than none recompresses each batch). */
  readonly targetCompression: CompressionCodec;
  /**
   * Mock only: records the worker copies from another topic, in the same process, before the
   * measured copy (0: none). A Lambda that stays warm pays start-up and the JIT's compilation
   * once, not per invocation; the measured copy then runs on compiled code.
   */
  readonly warmupRecords: number;
  /**
   * The warm-up is copied by the measured copy's own replicator, which then mirrors the idle
   * warm-up topic alongside (as a warm Lambda keeps its replicator); else by one of its own.
   */
  readonly warmupShared: boolean;
  /** The Node the mirror worker runs on: the functions' release from the test bed, or this one. */
  readonly workerNode: WorkerNode;
}

export type BenchCopy = "records" | "batches";

export const DEFAULT_OPTIONS: BenchOptions = {
  kafka: "mock",
  // One broker per real cluster: on 2 cores, three per cluster (six JVMs) spend most of the CPU
  // on replicating between themselves, which no replicator can be faster than.
  brokers: 1,
  records: 1_000_000,
  partitions: 8,
  recordBytes: 1024,
  sourceBatchBytes: 1024 * 1024,
  rate: 10_000,
  latencySeconds: 20,
  lingerMs: 5,
  lambdaMemoryMb: 1769,
  targetRttMs: 0,
  skipKcat: false,
  skipLatency: false,
  cpuProfDir: null,
  copy: "records",
  targetCompression: "none",
  warmupRecords: 0,
  warmupShared: false,
  workerNode: "functions",
};

const NUMERIC = {
  "--records": "records",
  "--partitions": "partitions",
  "--record-bytes": "recordBytes",
  "--source-batch-bytes": "sourceBatchBytes",
  "--rate": "rate",
  "--latency-seconds": "latencySeconds",
  "--linger-ms": "lingerMs",
  "--lambda-memory-mb": "lambdaMemoryMb",
  "--target-rtt-ms": "targetRttMs",
  "--warmup-records": "warmupRecords",
} as const satisfies Record<string, keyof BenchOptions>;

export const USAGE = `usage: npm run bench -- [options]
  --records N             records for the throughput runs (default ${DEFAULT_OPTIONS.records})
  --partitions N          source partitions (default ${DEFAULT_OPTIONS.partitions})
  --record-bytes N        value size in bytes (default ${DEFAULT_OPTIONS.recordBytes})
  --source-batch-bytes N  source producer batch bound (default ${DEFAULT_OPTIONS.sourceBatchBytes})
  --rate N                latency run: records/s (default ${DEFAULT_OPTIONS.rate})
  --latency-seconds N     latency run: seconds of production (default ${DEFAULT_OPTIONS.latencySeconds})
  --linger-ms N           latency run: producer linger (default ${DEFAULT_OPTIONS.lingerMs})
  --lambda-memory-mb N    memory size for the cost estimate (default ${DEFAULT_OPTIONS.lambdaMemoryMb})
  --target-rtt-ms N       mock only: target brokers answer N ms later, as in another region (default 0)
  --kafka mock|real       librdkafka's mock clusters (default; kcat vs kafka-mirror), or real Apache
                          Kafka 4.1.2 (kcat, MirrorMaker 2 and kafka-mirror on the same clusters)
  --brokers N             --kafka real: brokers per cluster, 1 or 3 (default ${DEFAULT_OPTIONS.brokers})
  --copy records|batches  the worker's target.copy (default ${DEFAULT_OPTIONS.copy})
  --target-compression C  the worker's target.compression: ${COMPRESSION_CODECS.join(", ")} (default ${DEFAULT_OPTIONS.targetCompression})
  --warmup-records N      mock only: the worker first copies N records of another topic in the same
                          process, as a warm Lambda would have (default 0)
  --warmup-shared         the measured copy's replicator does the warm-up and then mirrors that idle
                          topic too (default: a replicator of its own)
  --worker-node functions|current
                          the Node the worker runs on: the Lambda functions' release, which the test
                          bed fetches (default), or the one running the bench
  --skip-kcat             do not run the kcat pipeline
  --skip-latency          do not run the latency run
  --cpu-prof DIR          write a V8 CPU profile of the mirror worker into DIR`;

export function parseBenchOptions(argv: readonly string[]): BenchOptions {
  const options: { -readonly [K in keyof BenchOptions]: BenchOptions[K] } = { ...DEFAULT_OPTIONS };
  const problems: string[] = [];
  let brokersGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--kafka") {
      const kafka = argv[++i];
      if (kafka === "mock" || kafka === "real") options.kafka = kafka;
      else problems.push(`--kafka needs mock or real, got ${kafka ?? "nothing"}`);
    } else if (arg === "--brokers") {
      const raw = argv[++i];
      if (raw === "1" || raw === "3") options.brokers = Number(raw);
      else problems.push(`--brokers needs 1 or 3, got ${raw ?? "nothing"}`);
      brokersGiven = true;
    } else if (arg === "--copy") {
      const copy = argv[++i];
      if (copy === "records" || copy === "batches") options.copy = copy;
      else problems.push(`--copy needs records or batches, got ${copy ?? "nothing"}`);
    } else if (arg === "--target-compression") {
      const codec = argv[++i];
      const known = COMPRESSION_CODECS.find((c) => c === codec);
      if (known !== undefined) options.targetCompression = known;
      else
        problems.push(
          `--target-compression needs one of ${COMPRESSION_CODECS.join(", ")}, got ${codec ?? "nothing"}`,
        );
    } else if (arg === "--worker-node") {
      const node = argv[++i];
      if (node === "functions" || node === "current") options.workerNode = node;
      else problems.push(`--worker-node needs functions or current, got ${node ?? "nothing"}`);
    } else if (arg === "--warmup-shared") options.warmupShared = true;
    else if (arg === "--skip-kcat") options.skipKcat = true;
    else if (arg === "--skip-latency") options.skipLatency = true;
    else if (arg === "--cpu-prof") {
      const dir = argv[++i];
      if (dir === undefined || dir.startsWith("--")) problems.push("--cpu-prof needs a directory");
      else options.cpuProfDir = dir;
    } else if (arg in NUMERIC) {
      const key = NUMERIC[arg as keyof typeof NUMERIC];
      const raw = argv[++i];
      const value = Number(raw);
      const zeroAllowed = key === "lingerMs" || key === "targetRttMs" || key === "warmupRecords";
      if (raw === undefined || !Number.isSafeInteger(value) || value < (zeroAllowed ? 0 : 1)) {
        problems.push(
          `${arg} needs ${zeroAllowed ? "an integer >= 0" : "a positive integer"}, got ${raw ?? "nothing"}`,
        );
      } else options[key] = value;
    } else problems.push(`unknown option ${arg}`);
  }
  if (brokersGiven && options.kafka !== "real") problems.push("--brokers applies to --kafka real only");
  if (options.targetRttMs > 0 && options.kafka !== "mock")
    problems.push("--target-rtt-ms applies to the mock bench only");
  if (options.warmupRecords > 0 && options.kafka !== "mock")
    problems.push("--warmup-records applies to the mock bench only");
  if (options.warmupShared && options.warmupRecords === 0)
    problems.push("--warmup-shared needs --warmup-records");
  if (options.kafka === "real" && (options.skipKcat || options.skipLatency || options.cpuProfDir !== null)) {
    // The real bench's point is the three tools side by side in one run.
    problems.push("--skip-kcat, --skip-latency and --cpu-prof apply to the mock bench only");
  }
  if (problems.length > 0) throw new Error(`${problems.join("; ")}\n${USAGE}`);
  return options;
}
