/**
 * Steady-state latency: a producer writes to the source at a fixed rate while a replicator copies
 * continuously; a reader on the target notes when each record arrives. The delay of a record is
 * its arrival time minus its source timestamp (set when the producer created it), so it covers
 * the producer's linger, the source append, the replicator's fetch, produce and commit, and the
 * reader's fetch. Producer and reader share this process and clock.
 *
 * The source timestamp of an arrival is looked up by its key (`k<partition>-<sequence>`, unique
 * per record), not read from the copy: kcat's producer stamps its own time on what it writes, and
 * a key also lets a copy that spreads records over partitions by key (kcat again) be measured.
 * The reader reads read_committed: a transactional copy counts once it is visible to consumers.
 */
import type { MirrorRecord, TopicPartition } from "../../lib/core/model.js";
import { KafkaPartitionWriter } from "../../lib/kafka/produce/target-writer.js";
import { KafkaPartitionReader } from "../../lib/kafka/read/source-reader.js";
import { benchRecord, ValuePool } from "./data.js";

export interface LatencyOptions {
  readonly sourceBrokers: readonly string[];
  readonly targetBrokers: readonly string[];
  /** Source topic; the copy is read from the target topic of the same name. */
  readonly topic: string;
  readonly partitions: number;
  readonly recordBytes: number;
  readonly rate: number;
  readonly seconds: number;
  readonly lingerMs: number;
  /** How long to wait for the last records after production ends. @default 30000 */
  readonly drainTimeoutMs?: number;
  /**
   * While waiting for the warm-up and for the last records, write a record that is not measured
   * (key `nudge`) to every partition this often. For kcat's producer: kcat 1.7 reads its input
   * 128 bytes at a time with a blocking fread, so a record leaves it only once 128 more bytes
   * follow; in the steady stream that is the next record, microseconds later, but the warm-up
   * and the last records would wait forever. Off when unset.
   */
  readonly nudgeMs?: number;
}

export interface LatencyResult {
  readonly produced: number;
  /** Distinct records that arrived (a duplicate copy counts once, at its first arrival). */
  readonly received: number;
  /** Records per second the producer achieved: all produced and acknowledged by the source. */
  readonly producedRate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

const WARMUP_TIMEOUT_MS = 60_000;

/**
 * The share of the asked rate a latency run must reach. Below it the producer, not the
 * replicator, set the pace: its records waited in its own queue with their timestamps already
 * taken, so every delay (seen: p99 6-8 s at 8,139 of 10,000 records/s on a slow VM) would
 * measure the producer. 5% leaves room for the last write's acknowledgement in a short run.
 */
export const MIN_ACHIEVED_SHARE = 0.95;

/** Throws, naming the run, when its producer fell short of the rate asked (MIN_ACHIEVED_SHARE). */
export function assertRateHeld(result: LatencyResult, rate: number, what: string): void {
  if (result.producedRate >= rate * MIN_ACHIEVED_SHARE) return;
  const share = Math.round((100 * result.producedRate) / rate);
  throw new Error(
    `${what}: the producer reached ${Math.round(result.producedRate)} of the ${rate} records/s asked ` +
      `(${share}%, below ${MIN_ACHIEVED_SHARE * 100}%): its p99 (${result.p99Ms} ms) would measure the ` +
      "producer, not the replicator. Run on a quieter machine or ask less (--rate).",
  );
}

/** Call once the replicator runs: waits for it to copy a warm-up record per partition, then measures. */
export async function measureLatency(opts: LatencyOptions): Promise<LatencyResult> {
  const writer = new KafkaPartitionWriter({
    brokers: [...opts.sourceBrokers],
    clientId: "bench-latency-producer",
  });
  const reader = new KafkaPartitionReader({
    brokers: [...opts.targetBrokers],
    clientId: "bench-latency-reader",
  });
  const pool = new ValuePool(opts.recordBytes);
  const tps: TopicPartition[] = Array.from({ length: opts.partitions }, (_, partition) => ({
    topic: opts.topic,
    partition,
  }));
  const total = opts.rate * opts.seconds;
  const arrivals = new Arrivals(total, opts.partitions);
  let reading = true;
  const readLoops = tps.map(async (tp) => {
    let offset = 0;
    while (reading) {
      const fetched = await reader.fetch(tp, offset, {
        maxRecords: 100_000,
        maxBytes: 4 << 20,
        maxWaitMs: 100,
      });
      const now = Date.now();
      for (const record of fetched.records) arrivals.note(record.key, now);
      offset = fetched.nextOffset;
    }
  });

  const nudge = (): Promise<unknown> =>
    Promise.all(
      tps.map((tp) => writer.write(tp, [{ ...benchRecord(pool, tp.partition, 0, Date.now()), key: NUDGE }])),
    );
  try {
    // Warm-up (sequence 0): the replicator has its partitions, producer ids and connections once
    // these arrive.
    await Promise.all(tps.map((tp) => writer.write(tp, [benchRecord(pool, tp.partition, 0, Date.now())])));
    await nudging(opts.nudgeMs, nudge, () =>
      until(() => arrivals.warmedUp(), WARMUP_TIMEOUT_MS, "warm-up records did not arrive"),
    );

    const started = performance.now();
    const producer = new PacedProducer(writer, opts.topic, opts.partitions);
    let produced = 0;
    while (produced < total) {
      const due = Math.min(total, Math.floor((opts.rate * (performance.now() - started)) / 1000));
      const now = Date.now();
      for (; produced < due; produced++) {
        const sequence = produced + 1;
        const partition = produced % opts.partitions;
        arrivals.produced(sequence, now);
        producer.add(partition, benchRecord(pool, partition, sequence, now));
      }
      producer.send();
      await sleep(Math.max(1, opts.lingerMs));
    }
    await producer.flushed();
    const producedRate = produced / ((performance.now() - started) / 1000);
    await nudging(opts.nudgeMs, nudge, () =>
      until(() => arrivals.received >= produced, opts.drainTimeoutMs ?? 30_000, "").catch(() => undefined),
    );
    reading = false;
    await Promise.all(readLoops);
    const sorted = arrivals.sortedDelays();
    return {
      produced,
      received: arrivals.received,
      producedRate,
      ...delayPercentiles(sorted),
    };
  } finally {
    reading = false;
    await Promise.allSettled(readLoops);
    await Promise.allSettled([writer.close(), reader.close()]);
  }
}

/**
 * The latency run's producer: at most one write in flight per partition, and what accumulates
 * meanwhile goes out in the next one, as a Kafka producer's batches do. A write per partition per
 * linger instead queued behind each other in the writer once a write took longer than the
 * linger, and the producer fell behind the rate (8,139 of 10,000 records/s on a slow VM; 274 of
 * 500 on a real 1-broker Kafka, 8 ms per write with four partitions writing at once).
 */
class PacedProducer {
  readonly #writer: KafkaPartitionWriter;
  readonly #topic: string;
  readonly #pending: MirrorRecord[][];
  readonly #inFlight: boolean[];
  readonly #idle: (() => void)[] = [];
  #failure: unknown;

  constructor(writer: KafkaPartitionWriter, topic: string, partitions: number) {
    this.#writer = writer;
    this.#topic = topic;
    this.#pending = Array.from({ length: partitions }, () => []);
    this.#inFlight = Array.from({ length: partitions }, () => false);
  }

  add(partition: number, record: MirrorRecord): void {
    this.#pending[partition]?.push(record);
  }

  /** Sends what was added to every partition with no write in flight (the others follow theirs). */
  send(): void {
    for (let partition = 0; partition < this.#pending.length; partition++) this.#send(partition);
  }

  /** Resolves once everything added is acknowledged; rejects with the first failed write. */
  async flushed(): Promise<void> {
    while (this.#failure === undefined && this.#inFlight.some(Boolean)) {
      await new Promise<void>((resolve) => this.#idle.push(resolve));
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  #send(partition: number): void {
    const batch = this.#pending[partition];
    if (this.#inFlight[partition] || batch === undefined || batch.length === 0) return;
    this.#pending[partition] = [];
    this.#inFlight[partition] = true;
    this.#writer.write({ topic: this.#topic, partition }, batch).then(
      () => {
        this.#inFlight[partition] = false;
        this.#send(partition);
        for (const wake of this.#idle.splice(0)) wake();
      },
      (error: unknown) => {
        this.#failure ??= error;
        this.#inFlight[partition] = false;
        for (const wake of this.#idle.splice(0)) wake();
      },
    );
  }
}

const NUDGE = Buffer.from("nudge");

/** Runs `wait`, writing nudges every `everyMs` meanwhile (none when unset). */
async function nudging<T>(
  everyMs: number | undefined,
  nudge: () => Promise<unknown>,
  wait: () => Promise<T>,
): Promise<T> {
  if (everyMs === undefined) return wait();
  let waiting = true;
  const loop = (async () => {
    while (waiting) {
      await nudge();
      await sleep(everyMs);
    }
  })();
  try {
    return await wait();
  } finally {
    waiting = false;
    await loop;
  }
}

/** Source timestamps by sequence, and the first arrival of each measured record. */
class Arrivals {
  received = 0;
  readonly #producedAt: Float64Array;
  readonly #seen: Uint8Array;
  readonly #delays: number[] = [];
  readonly #warm: Uint8Array;
  #warmCount = 0;

  constructor(total: number, partitions: number) {
    this.#producedAt = new Float64Array(total + 1);
    this.#seen = new Uint8Array(total + 1);
    this.#warm = new Uint8Array(partitions);
  }

  produced(sequence: number, at: number): void {
    this.#producedAt[sequence] = at;
  }

  warmedUp(): boolean {
    return this.#warmCount === this.#warm.length;
  }

  note(key: Buffer | null, now: number): void {
    const parsed = key === null ? null : parseBenchKey(key);
    if (parsed === null) return;
    const { partition, sequence } = parsed;
    if (sequence === 0) {
      if (partition < this.#warm.length && this.#warm[partition] === 0) {
        this.#warm[partition] = 1;
        this.#warmCount++;
      }
      return;
    }
    if (sequence >= this.#seen.length || this.#seen[sequence] === 1) return;
    this.#seen[sequence] = 1;
    this.received++;
    this.#delays.push(now - (this.#producedAt[sequence] as number));
  }

  sortedDelays(): Float64Array {
    return Float64Array.from(this.#delays).sort();
  }
}

const K = 0x6b;
const DASH = 0x2d;
const ZERO = 0x30;

/** `k<partition>-<index>` (benchRecord's keys) read from the bytes; null for any other key. */
export function parseBenchKey(key: Buffer): { partition: number; sequence: number } | null {
  if (key[0] !== K) return null;
  const dash = key.indexOf(DASH, 1);
  if (dash < 2 || dash === key.length - 1) return null;
  const partition = digits(key, 1, dash);
  const sequence = digits(key, dash + 1, key.length);
  return partition < 0 || sequence < 0 ? null : { partition, sequence };
}

function digits(bytes: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = (bytes[i] as number) - ZERO;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** The p50, p99 and largest of delays sorted ascending (NaN each when there are none). */
export function delayPercentiles(sorted: Float64Array): { p50Ms: number; p99Ms: number; maxMs: number } {
  return {
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
  };
}

function percentile(sorted: Float64Array, q: number): number {
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
