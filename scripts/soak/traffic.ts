/**
 * Steady traffic into the source (records stamped with their creation time) and readers on the
 * target that note when each record arrives: a record's latency is its arrival time minus its
 * source timestamp. Producer and readers share this process and clock.
 */
import type { MirrorRecord, TopicPartition } from "../../lib/core/model.js";
import { KafkaPartitionWriter } from "../../lib/kafka/produce/target-writer.js";
import { KafkaPartitionReader } from "../../lib/kafka/read/source-reader.js";
import { percentile } from "../bench/latency.js";

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
}

export class Traffic {
  readonly #writer: KafkaPartitionWriter;
  readonly #reader: KafkaPartitionReader;
  readonly #partitions: readonly TopicPartition[];
  readonly #rate: number;
  readonly #delays: number[] = [];
  #produced = 0;
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
  ) {
    this.#writer = new KafkaPartitionWriter({ brokers: sourceBrokers, clientId: "soak-producer" });
    this.#reader = new KafkaPartitionReader({ brokers: targetBrokers, clientId: "soak-arrivals" });
    this.#partitions = partitions;
    this.#rate = rate;
  }

  /** Starts producing `rate` records/s and reading the target. */
  start(): void {
    this.#loops = [this.#produce(), ...this.#partitions.map((tp, index) => this.#read(tp, index))];
  }

  /** Resolves once every partition has had a record arrive (throws after `timeoutMs`). */
  async warmedUp(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.#arrived.size < this.#partitions.length) {
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
    return this.#received >= this.#produced;
  }

  /** Stops producing and reading; waits until everything produced arrived (or `drainMs` passed). */
  async stop(drainMs = 60_000): Promise<Latency> {
    await this.stopProducing();
    const until = Date.now() + drainMs;
    while (this.#received < this.#produced && Date.now() < until) await sleep(100);
    this.#reading = false;
    await Promise.allSettled(this.#loops);
    await Promise.allSettled([this.#writer.close(), this.#reader.close()]);
    const sorted = Float64Array.from(this.#delays).sort();
    return {
      produced: this.#produced,
      received: this.#received,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      maxMs: sorted.at(-1) ?? Number.NaN,
      maxNoCopyMs: this.#maxNoCopyMs,
    };
  }

  #reading = true;

  async #produce(): Promise<void> {
    const started = performance.now();
    while (this.#running) {
      const due = Math.floor((this.#rate * (performance.now() - started)) / 1000);
      const chunks = new Map<number, MirrorRecord[]>();
      const now = Date.now();
      for (; this.#produced < due; this.#produced++) {
        const index = this.#produced % this.#partitions.length;
        const records = chunks.get(index) ?? [];
        records.push(this.#record(now));
        chunks.set(index, records);
      }
      await Promise.all(
        [...chunks].map(([index, records]) =>
          this.#writer.write(this.#partitions[index] as TopicPartition, records),
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
            this.#delays.push(now - record.timestamp);
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

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
