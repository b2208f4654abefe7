/**
 * Steady traffic into the source (records stamped with their creation time) and readers on the
 * target that note when each record arrives: a record's latency is its arrival time minus its
 * source timestamp. Producer and readers share this process and clock.
 */
import type { MirrorRecord, TopicPartition } from "../../lib/core/model.js";
import { KafkaPartitionWriter } from "../../lib/kafka/produce/target-writer.js";
import { KafkaPartitionReader } from "../../lib/kafka/read/source-reader.js";
import { delayPercentiles } from "../bench/latency.js";

/** Records that come seldom: one per partition every `everyMs`, beside the steady ones. */
export interface SparseTraffic {
  readonly partitions: readonly TopicPartition[];
  readonly everyMs: number;
}

/** Arrival delays of one kind of record. */
export interface Delays {
  /** Records measured (created after measureFromNow). */
  readonly records: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface Latency {
  readonly produced: number;
  readonly received: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /**
   * The longest time any partition had a record waiting and nothing arriving: nobody copying
   * it (an owned lease nobody pumps counts here, not as holderless).
   */
  readonly maxNoCopyMs: number;
  /** The sparse partitions' records alone (null without any): a record that waits for a poll shows here. */
  readonly sparse: Delays | null;
}

export class Traffic {
  readonly #writer: KafkaPartitionWriter;
  readonly #reader: KafkaPartitionReader;
  readonly #partitions: readonly TopicPartition[];
  readonly #rate: number;
  readonly #sparse: SparseTraffic | null;
  /** Steady partitions first, then the sparse ones: a read loop's index says which it is. */
  readonly #all: readonly TopicPartition[];
  readonly #delays: number[] = [];
  readonly #sparseDelays: number[] = [];
  #produced = 0;
  #sparseProduced = 0;
  #received = 0;
  #running = true;
  #loops: Promise<void>[] = [];
  #sequence = 0;
  readonly #arrived = new Set<number>();
  #measureFrom = Number.POSITIVE_INFINITY;
  #maxNoCopyMs = 0;

  constructor(
    sourceBrokers: string[],
    targetBrokers: string[],
    partitions: readonly TopicPartition[],
    rate: number,
    sparse: SparseTraffic | null = null,
  ) {
    this.#writer = new KafkaPartitionWriter({ brokers: sourceBrokers, clientId: "soak-producer" });
    this.#reader = new KafkaPartitionReader({ brokers: targetBrokers, clientId: "soak-arrivals" });
    this.#partitions = partitions;
    this.#rate = rate;
    this.#sparse = sparse;
    this.#all = [...partitions, ...(sparse?.partitions ?? [])];
  }

  /** Starts producing `rate` records/s (and the sparse ones) and reading the target. */
  start(): void {
    this.#loops = [this.#produce(), ...this.#all.map((tp, index) => this.#read(tp, index))];
  }

  /** Resolves once every partition has had a record arrive (throws after `timeoutMs`). */
  async warmedUp(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.#arrived.size < this.#all.length) {
      if (Date.now() > until)
        throw new Error(`only ${this.#arrived.size} partitions copy after ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  /** Latency counts records created from now on. */
  measureFromNow(): void {
    this.#measureFrom = Date.now();
  }

  /** Resolves once production has stopped (stopProducing or stop). */
  get productionEnded(): Promise<void> {
    return this.#loops[0] ?? Promise.resolve();
  }

  /** Stops producing; resolves once the last write to the source is done. */
  async stopProducing(): Promise<void> {
    this.#running = false;
    await this.#loops[0];
  }

  /** Whether everything produced so far has arrived in the target. */
  get drained(): boolean {
    return this.#received >= this.#produced + this.#sparseProduced;
  }

  /** Stops producing and reading; waits until everything produced arrived (or `drainMs` passed). */
  async stop(drainMs = 60_000): Promise<Latency> {
    await this.stopProducing();
    const until = Date.now() + drainMs;
    while (!this.drained && Date.now() < until) await sleep(100);
    this.#reading = false;
    await Promise.allSettled(this.#loops);
    await Promise.allSettled([this.#writer.close(), this.#reader.close()]);
    const steady = delays(this.#delays);
    return {
      produced: this.#produced + this.#sparseProduced,
      received: this.#received,
      p50Ms: steady.p50Ms,
      p99Ms: steady.p99Ms,
      maxMs: steady.maxMs,
      maxNoCopyMs: this.#maxNoCopyMs,
      sparse: this.#sparse === null ? null : delays(this.#sparseDelays),
    };
  }

  #reading = true;

  async #produce(): Promise<void> {
    const started = performance.now();
    while (this.#running) {
      const due = Math.floor((this.#rate * (performance.now() - started)) / 1000);
      const chunks = new Map<number, MirrorRecord[]>();
      const now = Date.now();
      const add = (index: number) => {
        const records = chunks.get(index) ?? [];
        records.push(this.#record(now));
        chunks.set(index, records);
      };
      for (; this.#produced < due; this.#produced++) add(this.#produced % this.#partitions.length);
      const sparse = this.#sparse?.partitions.length ?? 0;
      const sparseDue =
        this.#sparse === null
          ? 0
          : Math.floor((sparse * (performance.now() - started)) / this.#sparse.everyMs);
      for (; this.#sparseProduced < sparseDue; this.#sparseProduced++) {
        add(this.#partitions.length + (this.#sparseProduced % sparse));
      }
      await Promise.all(
        [...chunks].map(([index, records]) =>
          this.#writer.write(this.#all[index] as TopicPartition, records),
        ),
      );
      await sleep(20);
    }
  }

  #record(timestamp: number): MirrorRecord {
    const i = this.#sequence++;
    const value = Buffer.alloc(200, i & 0xff);
    value.writeUInt32BE(i, 0);
    return { offset: 0, timestamp, key: Buffer.from([0xfe, (i >> 8) & 0xff, i & 0xff]), value, headers: [] };
  }

  async #read(tp: TopicPartition, index: number): Promise<void> {
    let offset = 0;
    let lastArrival: number | null = null;
    while (this.#reading) {
      try {
        const fetched = await this.#reader.fetch(tp, offset, {
          maxRecords: 10_000,
          maxBytes: 4 << 20,
          maxWaitMs: 100,
        });
        const now = Date.now();
        if (fetched.records.length > 0) this.#arrived.add(index);
        let oldest = Number.POSITIVE_INFINITY;
        for (const record of fetched.records) {
          if (record.timestamp >= this.#measureFrom) {
            (index < this.#partitions.length ? this.#delays : this.#sparseDelays).push(
              now - record.timestamp,
            );
            oldest = Math.min(oldest, record.timestamp);
          }
          this.#received++;
        }
        // The oldest of these waited since it was written, or since the last arrival if later.
        if (oldest !== Number.POSITIVE_INFINITY)
          this.#maxNoCopyMs = Math.max(this.#maxNoCopyMs, now - Math.max(oldest, lastArrival ?? oldest));
        if (fetched.records.length > 0) lastArrival = now;
        offset = fetched.nextOffset;
      } catch {
        // The target topic may not exist yet (the worker creates it): look again.
        await sleep(200);
      }
    }
  }
}

function delays(of: readonly number[]): Delays {
  const sorted = Float64Array.from(of).sort();
  return { records: sorted.length, ...delayPercentiles(sorted) };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
