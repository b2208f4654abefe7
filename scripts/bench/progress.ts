/**
 * Watching a copy arrive on the target, the same way for every tool: every SAMPLE_MS this process
 * counts the records a read_committed consumer of the target could read, and notes the time (and,
 * when asked, a process's CPU time). The copy window runs from the last sample that saw nothing
 * to the first that saw everything, so it holds the whole copy and at most two sample intervals
 * more; a tool's startup before its first record is reported apart (MirrorMaker 2 takes seconds
 * to join its Connect group and start its tasks, which says nothing about its copy rate).
 *
 * Counting: a copy written in transactions has commit markers between its records, so its offsets
 * overstate its records. "lastKey" reads the last committed record of each partition instead and
 * takes the count from its key (the bench's keys are `k<partition>-<index>`, indexes 0.. in order,
 * data.ts), which is exact for a copy that keeps partitions and order (kafka-mirror, MM2).
 * "offsets" sums high watermarks, exact for a non-transactional copy (kcat's producer, which
 * spreads records over partitions by key, so the last-key count does not apply to it).
 */
import type { MirrorRecord, TopicPartition } from "../../lib/core/model.js";
import { KafkaClusterAdmin } from "../../lib/kafka/admin/cluster-admin.js";
import { KafkaPartitionReader } from "../../lib/kafka/read/source-reader.js";
import { parseBenchKey } from "./latency.js";

export const SAMPLE_MS = 100;

export type CountMethod = "lastKey" | "offsets";

export interface CopyWatchOptions {
  readonly targetBrokers: readonly string[];
  readonly topic: string;
  /** Records each source partition holds (indexes 0..n-1): the copy is complete at these. */
  readonly expected: readonly number[];
  readonly method: CountMethod;
  /** Cumulative CPU seconds of the copying process(es), sampled with each count; NaN when unknown. */
  readonly cpuSeconds?: () => number;
  readonly timeoutMs: number;
  /** Checked every sample: a tool that died ends the watch with its error. */
  readonly failed?: () => Error | undefined;
}

export interface CopyWindow {
  /** From the watch's start (the tool's spawn) to the first sample that saw a copied record. */
  readonly firstRecordMs: number;
  /** From the last sample that saw nothing to the first that saw every record. */
  readonly windowMs: number;
  readonly records: number;
  readonly rps: number;
  /** CPU seconds used within the window; NaN without `cpuSeconds`. */
  readonly cpuSeconds: number;
}

interface Sample {
  readonly at: number;
  readonly count: number;
  readonly cpu: number;
}

/** Start it just before the tool; resolves once every record arrived. */
export async function watchCopy(opts: CopyWatchOptions): Promise<CopyWindow> {
  const total = opts.expected.reduce((sum, n) => sum + n, 0);
  const counter = new CopyCounter(opts.targetBrokers, opts.topic, opts.expected.length);
  const started = performance.now();
  let empty: Sample | undefined;
  let first: Sample | undefined;
  try {
    for (;;) {
      const failure = opts.failed?.();
      if (failure) throw failure;
      const at = performance.now();
      const cpu = opts.cpuSeconds?.() ?? Number.NaN;
      const count = await counter.count(opts.method);
      if (count === 0) empty = { at, count, cpu };
      else first ??= { at, count, cpu };
      if (count >= total) {
        const from = empty ?? { at: started, count: 0, cpu: Number.NaN };
        const windowMs = at - from.at;
        return {
          firstRecordMs: (first?.at ?? at) - started,
          windowMs,
          records: total,
          rps: total / (windowMs / 1000),
          cpuSeconds: cpu - from.cpu,
        };
      }
      if (at - started > opts.timeoutMs) {
        throw new Error(`${opts.topic}: ${count} of ${total} records copied after ${opts.timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, SAMPLE_MS - (performance.now() - at))));
    }
  } finally {
    await counter.close();
  }
}

/** How far back from the end a read for the last committed record starts, at first. */
const TAIL = 16;

class CopyCounter {
  readonly #admin: KafkaClusterAdmin;
  readonly #reader: KafkaPartitionReader;
  readonly #topic: string;
  readonly #partitions: number[];
  /** Last count per partition, and the high watermark it was taken at. */
  readonly #known: { hwm: number; count: number }[];

  constructor(brokers: readonly string[], topic: string, partitions: number) {
    this.#admin = new KafkaClusterAdmin({ brokers: [...brokers], clientId: "bench-progress" });
    this.#reader = new KafkaPartitionReader({ brokers: [...brokers], clientId: "bench-progress" });
    this.#topic = topic;
    this.#partitions = Array.from({ length: partitions }, (_, p) => p);
    this.#known = this.#partitions.map(() => ({ hwm: 0, count: 0 }));
  }

  /** 0 while the topic's offsets cannot be listed yet (a tool creating it, a broker busy). */
  async count(method: CountMethod): Promise<number> {
    let offsets: Awaited<ReturnType<KafkaClusterAdmin["listOffsets"]>>;
    try {
      offsets = await this.#admin.listOffsets(this.#topic, this.#partitions);
    } catch {
      return this.#known.reduce((sum, k) => sum + k.count, 0);
    }
    if (method === "offsets") return offsets.reduce((sum, o) => sum + o.logEndOffset - o.logStartOffset, 0);
    await Promise.all(
      offsets.map(async (o) => {
        const known = this.#known[o.partition];
        if (known === undefined || o.logEndOffset === known.hwm) return;
        const last = await this.#lastCommitted({ topic: this.#topic, partition: o.partition }, o);
        const parsed = last?.key ? parseBenchKey(last.key) : null;
        if (last && parsed?.partition !== o.partition) {
          throw new Error(
            `${this.#topic}/${o.partition}: last record is not a bench record of this partition`,
          );
        }
        this.#known[o.partition] = { hwm: o.logEndOffset, count: parsed ? parsed.sequence + 1 : 0 };
      }),
    );
    return this.#known.reduce((sum, k) => sum + k.count, 0);
  }

  /**
   * The last record a read_committed consumer sees: read from a little before the end; when that
   * stretch holds no committed record (an open transaction past the last stable offset, markers,
   * aborted records), start further back.
   */
  async #lastCommitted(
    tp: TopicPartition,
    offsets: { logStartOffset: number; logEndOffset: number },
  ): Promise<MirrorRecord | undefined> {
    let end = offsets.logEndOffset;
    for (let back = TAIL; ; back *= 4) {
      const from = Math.max(offsets.logStartOffset, end - back);
      let last: MirrorRecord | undefined;
      let offset = from;
      for (;;) {
        const fetched = await this.#reader.fetch(tp, offset, {
          maxRecords: 100_000,
          maxBytes: 1 << 20,
          maxWaitMs: 0,
        });
        last = fetched.records.at(-1) ?? last;
        // For read_committed the reader reports the last stable offset as the high watermark.
        end = Math.min(end, fetched.highWatermark);
        if (fetched.nextOffset <= offset || fetched.nextOffset >= end) break;
        offset = fetched.nextOffset;
      }
      if (last !== undefined || from <= offsets.logStartOffset) return last;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#admin.close(), this.#reader.close()]);
  }
}
