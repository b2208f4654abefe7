/** The bench's human-readable table and its final machine-readable JSON line. */
import type { BenchResult } from "./run.js";

export interface BenchSummary {
  readonly records: number;
  readonly mirror_rps: number;
  readonly kcat_rps: number | null;
  readonly ratio: number | null;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly rss_mb: number;
  readonly verified: boolean;
  readonly cpu_s_per_gib: number;
  /** The worker's CPU per GiB over the second half of its copy: warm, without start-up and wind-down. */
  readonly cpu_s_per_gib_second_half: number | null;
  /** The kcat pipeline's CPU per GiB (both processes), null when skipped. */
  readonly kcat_cpu_s_per_gib: number | null;
  readonly usd_per_gib: number;
  /** The lease store's DynamoDB write units per GiB copied, at the measured rate. */
  readonly dynamodb_write_units_per_gib: number;
  /** The lease store's DynamoDB read units per GiB copied, at the measured rate. */
  readonly dynamodb_read_units_per_gib: number;
  /** Records/s the latency run's producer achieved (the run fails below 95% of --rate). */
  readonly achieved_rps: number | null;
  /** The worker's target.copy. */
  readonly copy: string;
  /** The worker's target.compression. */
  readonly target_compression: string;
  /** Fetch answers read into a buffer an earlier one gave back (KAFKA_MIRROR_ANSWER_POOL). */
  readonly answers_reused: number;
  /** Buffers the pool allocated (an answer of a size no free buffer fitted). */
  readonly answers_new: number;
  readonly answer_pool: string;
  /** Records the worker copied, unmeasured, before the measured copy (--warmup-records). */
  readonly warmup_records: number;
  /** The warm-up was copied by the measured copy's replicator (--warmup-shared). */
  readonly warmup_shared: boolean;
  /** The Node version the worker ran on (--worker-node). */
  readonly worker_node: string;
}

export function summarize(result: BenchResult): BenchSummary {
  const kcatRps = result.kcat?.rps ?? null;
  return {
    records: result.records,
    mirror_rps: Math.round(result.mirror.rps),
    kcat_rps: kcatRps === null ? null : Math.round(kcatRps),
    ratio: kcatRps === null ? null : round(result.mirror.rps / kcatRps, 3),
    p50_ms: result.latency === null ? null : result.latency.p50Ms,
    p99_ms: result.latency === null ? null : result.latency.p99Ms,
    rss_mb: Math.round(result.mirror.maxRssMb),
    verified: result.mirror.verified,
    cpu_s_per_gib: round(result.cpuSecondsPerGib, 2),
    cpu_s_per_gib_second_half:
      result.secondHalfCpuSecondsPerGib === null ? null : round(result.secondHalfCpuSecondsPerGib, 2),
    kcat_cpu_s_per_gib: result.kcatCpuSecondsPerGib === null ? null : round(result.kcatCpuSecondsPerGib, 2),
    usd_per_gib: round(result.cost.totalUsdPerGib, 6),
    dynamodb_write_units_per_gib: round(result.dynamodbUnitsPerGib.write, 1),
    dynamodb_read_units_per_gib: round(result.dynamodbUnitsPerGib.read, 1),
    achieved_rps: result.latency === null ? null : Math.round(result.latency.producedRate),
    copy: result.options.copy,
    target_compression: result.options.targetCompression,
    answers_reused: result.mirror.answers.reused,
    answers_new: result.mirror.answers.allocated,
    answer_pool: process.env.KAFKA_MIRROR_ANSWER_POOL || "on",
    warmup_records: result.mirror.warmupRecords,
    warmup_shared: result.options.warmupShared,
    worker_node: result.workerNode,
  };
}

export function formatTable(result: BenchResult): string {
  const { options: o, mirror, kcat, latency, cost, prices } = result;
  const mib = result.payloadBytes / 2 ** 20;
  const rows: [string, string][] = [
    ["machine", result.machine],
    [
      "data",
      `${result.records} records x ${o.recordBytes} B over ${o.partitions} partitions (${mib.toFixed(0)} MiB payload), source batches <= ${o.sourceBatchBytes} B`,
    ],
    ["source write (our writer, acks=all)", `${fmt(result.produceRps)} rec/s`],
    [
      "kcat -C -e | kcat -P",
      kcat === null
        ? "skipped"
        : `${fmt(kcat.rps)} rec/s (${(kcat.elapsedMs / 1000).toFixed(2)} s, ${kcat.copied} copied)`,
    ],
    [
      "kafka-mirror run --once",
      `${fmt(mirror.rps)} rec/s (${(mirror.elapsedMs / 1000).toFixed(2)} s, ${mirror.batches} batches, ${mirror.copied} copied)`,
    ],
    [
      "  of which",
      `first batch after ${(mirror.startupMs / 1000).toFixed(2)} s, last batch at ${(mirror.lastBatchMs / 1000).toFixed(2)} s, then caught-up check and wind-down`,
    ],
    [
      "  in a process that",
      o.warmupRecords > 0
        ? `had copied ${mirror.warmupRecords} warm-up records first (not in any figure here)${o.warmupShared ? ", with the same replicator" : ""}`
        : "started for it (the JIT's warm-up in every figure, start-up in the whole copy's)",
    ],
    ["ratio mirror / kcat", kcat === null ? "n/a" : (mirror.rps / kcat.rps).toFixed(3)],
    ["copy verified record for record", mirror.verified ? "yes" : "NO"],
    ["worker peak RSS", `${mirror.maxRssMb.toFixed(0)} MB`],
    [
      "answer buffers reused / new / given back",
      `${mirror.answers.reused} / ${mirror.answers.allocated} / ${mirror.answers.returned} (KAFKA_MIRROR_ANSWER_POOL=${process.env.KAFKA_MIRROR_ANSWER_POOL || "on"})`,
    ],
    ["worker CPU per GiB copied", `${result.cpuSecondsPerGib.toFixed(2)} s`],
    [
      "  over the copy's second half",
      result.secondHalfCpuSecondsPerGib === null
        ? "n/a"
        : `${result.secondHalfCpuSecondsPerGib.toFixed(2)} s (no start-up or wind-down${o.warmupRecords > 0 ? ")" : "; the JIT still compiles: --warmup-records)"}`,
    ],
    [
      "kcat pipeline CPU per GiB copied",
      result.kcatCpuSecondsPerGib === null
        ? "skipped"
        : `${result.kcatCpuSecondsPerGib.toFixed(2)} s (both processes)`,
    ],
    [
      "latency (source timestamp -> target arrival)",
      latency === null
        ? "skipped"
        : `p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms, max ${latency.maxMs} ms at ${fmt(latency.producedRate)} of ${fmt(o.rate)} rec/s asked (${latency.received}/${latency.produced} arrived)`,
    ],
    [
      `Lambda cost per GiB at ${o.lambdaMemoryMb} MB`,
      `$${cost.totalUsdPerGib.toFixed(6)} (compute+requests $${cost.lambdaUsdPerGib.toFixed(6)}, ${cost.secondsPerGib.toFixed(1)} s/GiB; DynamoDB $${cost.dynamodbUsdPerGib.toFixed(6)})`,
    ],
    [
      "  DynamoDB capacity per GiB",
      `${result.dynamodbUnitsPerGib.write.toFixed(1)} write units, ${result.dynamodbUnitsPerGib.read.toFixed(1)} read units (from ${mirror.dynamodb.writes} writes and ${mirror.dynamodb.reads} reads in the copy; checkpoints are per partition per leases.checkpointIntervalMs, so per GiB at this rate)`,
    ],
    [
      "price inputs",
      `Lambda arm64 $${prices.lambdaGbSecondUsd}/GB-s, $${prices.lambdaRequestUsd * 1e6}/M requests, ${prices.invocationSeconds} s per invocation; DynamoDB on-demand $${prices.dynamodbWriteUsd * 1e6}/M write units, $${prices.dynamodbReadUsd * 1e6}/M read units (us-east-1 list prices, assumed)`,
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n");
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
