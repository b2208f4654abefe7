/**
 * Steady-state latency: a producer writes to the source at a fixed rate while a worker copies
 * continuously; a reader on the target notes when each record arrives. The delay of a record is
 * its arrival time minus its source timestamp (set when the producer created it), so it covers
 * the producer's linger, the source append, the worker's fetch, produce and checkpoint, and the
 * reader's fetch. Producer and reader share this process and clock.
 */
import type { MirrorRecord, TopicPartition } from "../../lib/core/model.js";
import { KafkaSourceReader } from "../../lib/kafka/source-reader.js";
import { KafkaTargetWriter } from "../../lib/kafka/target-writer.js";
import { benchRecord, ValuePool } from "./data.js";

export interface LatencyOptions {
  readonly sourceBrokers: readonly string[];
  readonly targetBrokers: readonly string[];
  readonly topic: string;
  readonly partitions: number;
  readonly recordBytes: number;
  readonly rate: number;
  readonly seconds: number;
  readonly lingerMs: number;
  /** How long to wait for the last records after production ends. @default 30000 */
  readonly drainTimeoutMs?: number;
}

export interface LatencyResult {
  readonly produced: number;
  readonly received: number;
  /** Records per second the producer actually achieved. */
  readonly producedRate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

const WARMUP_TIMEOUT_MS = 60_000;

/** Call once the worker runs: waits for it to copy a warm-up record per partition, then measures. */
export async function measureLatency(opts: LatencyOptions): Promise<LatencyResult> {
  const writer = new KafkaTargetWriter({
    brokers: [...opts.sourceBrokers],
    clientId: "bench-latency-producer",
  });
  const reader = new KafkaSourceReader({
    brokers: [...opts.targetBrokers],
    clientId: "bench-latency-reader",
  });
  const pool = new ValuePool(opts.recordBytes);
  const tps: TopicPartition[] = Array.from({ length: opts.partitions }, (_, partition) => ({
    topic: opts.topic,
    partition,
  }));
  const delays: number[] = [];
  let measureFrom = Number.POSITIVE_INFINITY;
  let received = 0;
  let reading = true;
  const arrived = tps.map(() => 0);
  const readLoops = tps.map(async (tp, index) => {
    let offset = 0;
    while (reading) {
      const fetched = await reader.fetch(tp, offset, {
        maxRecords: 100_000,
        maxBytes: 4 << 20,
        maxWaitMs: 100,
      });
      const now = Date.now();
      for (const record of fetched.records) {
        if (record.timestamp >= measureFrom) {
          delays.push(now - record.timestamp);
          received++;
        }
      }
      arrived[index] = (arrived[index] ?? 0) + fetched.records.length;
      offset = fetched.nextOffset;
    }
  });

  try {
    // Warm-up: the worker has its leases, producer ids and connections once these arrive.
    await Promise.all(tps.map((tp) => writer.write(tp, [benchRecord(pool, tp.partition, 0, Date.now())])));
    await until(() => arrived.every((n) => n > 0), WARMUP_TIMEOUT_MS, "warm-up records did not arrive");

    measureFrom = Date.now();
    const started = performance.now();
    const writes: Promise<unknown>[] = [];
    let produced = 0;
    let sequence = 1;
    const total = opts.rate * opts.seconds;
    while (produced < total) {
      const due = Math.min(total, Math.floor((opts.rate * (performance.now() - started)) / 1000));
      if (due > produced) {
        const chunks: MirrorRecord[][] = tps.map(() => []);
        const now = Date.now();
        for (; produced < due; produced++, sequence++) {
          const partition = produced % opts.partitions;
          chunks[partition]?.push(benchRecord(pool, partition, sequence, now));
        }
        chunks.forEach((chunk, partition) => {
          if (chunk.length > 0) writes.push(writer.write({ topic: opts.topic, partition }, chunk));
        });
      }
      await sleep(Math.max(1, opts.lingerMs));
    }
    await Promise.all(writes);
    const producedRate = produced / ((performance.now() - started) / 1000);
    await until(() => received >= produced, opts.drainTimeoutMs ?? 30_000, "").catch(() => undefined);
    reading = false;
    await Promise.all(readLoops);
    const sorted = Float64Array.from(delays).sort();
    return {
      produced,
      received,
      producedRate,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      maxMs: sorted.at(-1) ?? Number.NaN,
    };
  } finally {
    reading = false;
    await Promise.allSettled(readLoops);
    await Promise.allSettled([writer.close(), reader.close()]);
  }
}

export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] as number;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until(condition: () => boolean, timeoutMs: number, message: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(message);
    await sleep(20);
  }
}
