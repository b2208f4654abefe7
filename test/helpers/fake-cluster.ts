/**
 * One Kafka cluster in memory, following the contracts of OUR ports (SourceReader, TargetWriter,
 * ClusterAdmin in lib/core/ports.ts and model.ts) literally; never a fake of kafkajs. Where the
 * fake has to pick a behaviour the contract leaves open, the comment says which.
 */
import {
  type CopyUnits,
  type EpochStart,
  type FetchedBatches,
  type FetchedRecords,
  type FetchLimits,
  isBatches,
  type MirrorRecord,
  type PartitionOffsets,
  type SourceBatch,
  type TopicInfo,
  type TopicPartition,
  type WriteResult,
} from "../../lib/core/model.js";
import type {
  Clock,
  ClusterAdmin,
  OpenTransactionEnd,
  PartitionIdentity,
  SourceReader,
  TargetWriter,
  TransactionTimeout,
  WriteDeadline,
} from "../../lib/core/ports.js";
import { type ProvenanceStamp, stamped } from "../../lib/core/provenance.js";
import { ReplicatorError } from "../../lib/errors.js";
import { fakeContentCrc, recordsOf, sourceBatch } from "./fake-batches.js";

/** A stored offset: a data record, or null for an offset that holds none (control batch, compaction gap). */
type Slot = {
  readonly offset: number;
  readonly record: MirrorRecord | null;
  readonly epoch: number;
  /** The batch it was written in (one per append, per write unit or group): fetchBatches' unit. */
  readonly batch: number;
  /** Who wrote it: -1n for append (another producer), InMemoryCluster.producerIdOfWrites for write. */
  readonly producerId: bigint;
};

class PartitionLog {
  slots: Slot[] = [];
  logStart = 0;
  end = 0;
  /** The leader epoch appends are stamped with; bumps on a leader change, clean or not. */
  epoch = 0;
  /**
   * Kafka's leader epoch cache (LeaderEpochFileCache): where each epoch began, oldest first. An
   * entry outlives its records when compaction removes them, and moves up with the log start.
   */
  epochStarts: { epoch: number; start: number }[] = [{ epoch: 0, start: 0 }];
  /** First offset of another producer's open transaction (the LSO); null when none is open. */
  openAt: number | null = null;
  /** Data records each batch was written with: fewer left means compaction or retention took some. */
  readonly batchSizes = new Map<number, number>();
  #batches = 0;

  /** Appends one batch of records at the end; returns their offsets. */
  appendBatch(records: readonly Omit<MirrorRecord, "offset">[], producerId: bigint): number[] {
    const batch = ++this.#batches;
    this.batchSizes.set(batch, records.length);
    return records.map((r) => {
      const offset = this.end++;
      this.slots.push({ offset, record: { ...r, offset }, epoch: this.epoch, batch, producerId });
      return offset;
    });
  }

  appendNonData(): void {
    this.slots.push({
      offset: this.end++,
      record: null,
      epoch: this.epoch,
      batch: ++this.#batches,
      producerId: -1n,
    });
  }
}

class TopicLog {
  constructor(
    readonly id: string,
    readonly partitions: PartitionLog[],
    /** Topic-level configs set on the topic (what describeTopicConfigs answers). */
    readonly configs: Map<string, string> = new Map(),
  ) {}
}

type TopicSpec = Parameters<ClusterAdmin["createTopics"]>[0][number];

export type NewRecord = Omit<MirrorRecord, "offset">;

export interface ClusterHooks {
  /** Runs before a fetch is served; throw to inject a failure, sleep on the clock to add latency. */
  beforeFetch?(tp: TopicPartition, offset: number): void | Promise<void>;
  /** Runs before a write lands; a throw means nothing was written. */
  beforeWrite?(tp: TopicPartition, records: readonly MirrorRecord[]): void | Promise<void>;
  /** Runs after a write landed; a throw means written but not acknowledged (a duplicate source). */
  afterWrite?(tp: TopicPartition, records: readonly MirrorRecord[]): void | Promise<void>;
}

export function recordBytes(r: NewRecord): number {
  let n = (r.key?.length ?? 0) + (r.value?.length ?? 0);
  for (const h of r.headers) n += h.key.length + (h.value?.length ?? 0);
  return n;
}

/** One Kafka cluster in memory: source reader, target writer and admin at once. */
export class InMemoryCluster implements SourceReader, TargetWriter, ClusterAdmin {
  readonly #clock: Clock;
  readonly #topics = new Map<string, TopicLog>();
  #topicIds = 0;
  hooks: ClusterHooks = {};
  fetches = 0;
  writes = 0;
  createTopicCalls: TopicSpec[] = [];
  alterConfigCalls: { topic: string; set: ReadonlyMap<string, string> }[] = [];
  createPartitionCalls: { topic: string; count: number }[] = [];
  /**
   * The broker configs describeBrokerConfigs answers, one map per broker (ids 1, 2, ...): one
   * broker with Kafka's default cap on transaction timeouts unless a test sets others, or
   * "refused" for a cluster that does not let us describe its brokers.
   */
  brokerConfigs: readonly ReadonlyMap<string, string>[] | "refused" = [
    new Map([["transaction.max.timeout.ms", "900000"]]),
  ];
  closed = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  createTopic(name: string, partitions: number, configs: ReadonlyMap<string, string> = new Map()): void {
    if (this.#topics.has(name)) return;
    this.#topics.set(
      name,
      new TopicLog(
        `topic-id-${++this.#topicIds}`,
        Array.from({ length: partitions }, () => new PartitionLog()),
        new Map(configs),
      ),
    );
  }

  /** Deletes the topic and creates it again: a new topic id and empty logs. */
  recreateTopic(name: string, partitions: number): void {
    this.#topics.delete(name);
    this.createTopic(name, partitions);
  }

  /**
   * An unclean leader election: the new leader's log ends at `offset` (everything from there is
   * gone) and the leader epoch bumps, so later appends carry the new epoch.
   */
  truncate(tp: TopicPartition, offset: number): void {
    const log = this.#log(tp);
    log.slots = log.slots.filter((s) => s.offset < offset);
    log.end = Math.max(log.logStart, Math.min(log.end, offset));
    log.epoch++;
    // The new leader's cache: what it had below the divergence, then its own epoch.
    log.epochStarts = log.epochStarts.filter((e) => e.start < log.end);
    log.epochStarts.push({ epoch: log.epoch, start: log.end });
  }

  /**
   * A clean leader change (a rolling restart, a preferred-leader election): the leader epoch
   * bumps and later appends carry it; nothing is truncated.
   */
  moveLeader(tp: TopicPartition): void {
    const log = this.#log(tp);
    log.epoch++;
    log.epochStarts.push({ epoch: log.epoch, start: log.end });
  }

  /**
   * Compaction: the data records at offsets [from, to) are removed; their offsets stay used (a
   * gap), and the leader epoch cache is untouched, as Kafka's log cleaner leaves it.
   */
  compact(tp: TopicPartition, from: number, to: number): void {
    const log = this.#log(tp);
    log.slots = log.slots.filter((s) => s.offset < from || s.offset >= to);
  }

  /** The topic's current id (test assertions). */
  topicId(topic: string): string | undefined {
    return this.#topics.get(topic)?.id;
  }

  /**
   * Appends data records, as one batch of another producer (a plain one, or the idempotent or
   * transactional `producerId`); returns their offsets.
   */
  append(tp: TopicPartition, records: readonly NewRecord[], producerId = -1n): number[] {
    return this.#log(tp).appendBatch(records, producerId);
  }

  /** Appends `count` offsets that carry no data record (a transaction marker, a compacted gap). */
  appendNonData(tp: TopicPartition, count = 1): void {
    const log = this.#log(tp);
    for (let i = 0; i < count; i++) log.appendNonData();
  }

  /**
   * Another producer begins a transaction at the current end: from here on a fetch (read
   * committed, like every reader of ours) returns nothing at or past this offset, whoever wrote
   * it, and reports it as its high watermark, as KafkaPartitionReader reports the LSO; listOffsets
   * still answers the real end. Records appended meanwhile stand for the transaction's and for
   * anyone else's written after it.
   */
  openTransaction(tp: TopicPartition): void {
    const log = this.#log(tp);
    log.openAt ??= log.end;
  }

  /** The open transaction ends (its marker takes one offset): everything before the end is readable. */
  endTransaction(tp: TopicPartition): void {
    this.appendNonData(tp);
    this.#log(tp).openAt = null;
  }

  /** Retention: everything below `offset` is deleted. */
  deleteBefore(tp: TopicPartition, offset: number): void {
    const log = this.#log(tp);
    log.logStart = Math.min(Math.max(log.logStart, offset), log.end);
    log.slots = log.slots.filter((s) => s.offset >= log.logStart);
    // Kafka's truncateFromStart: the epoch holding the new start now begins there.
    const below = log.epochStarts.filter((e) => e.start <= log.logStart);
    const kept = below.at(-1);
    log.epochStarts = [
      ...(kept === undefined ? [] : [{ epoch: kept.epoch, start: log.logStart }]),
      ...log.epochStarts.filter((e) => e.start > log.logStart),
    ];
  }

  /** The data records of a partition, in offset order. */
  records(tp: TopicPartition): MirrorRecord[] {
    return this.#log(tp).slots.flatMap((s) => (s.record === null ? [] : [s.record]));
  }

  async fetch(tp: TopicPartition, offset: number, limits: FetchLimits): Promise<FetchedRecords> {
    this.fetches++;
    await this.hooks.beforeFetch?.(tp, offset);
    let log = this.#log(tp);
    this.#checkRange(tp, log, offset);
    // Like a broker: wait up to maxWaitMs for data when caught up (no early wake-up here).
    if (offset === log.end && limits.maxWaitMs > 0) {
      await this.#clock.sleep(limits.maxWaitMs);
      log = this.#log(tp);
      this.#checkRange(tp, log, offset);
    }
    const stable = log.openAt ?? log.end;
    const records: MirrorRecord[] = [];
    let bytes = 0;
    let nextOffset = offset;
    const epochs: EpochStart[] = [];
    let full = false;
    for (const slot of log.slots) {
      if (slot.offset < offset) continue;
      if (slot.offset >= stable) break;
      if (slot.record !== null) {
        const size = recordBytes(slot.record);
        // At least one record even when it alone exceeds maxBytes, as Kafka does.
        full = records.length >= limits.maxRecords || (records.length > 0 && bytes + size > limits.maxBytes);
        if (full) break;
        records.push(slot.record);
        bytes += size;
      }
      // As the Kafka reader says it (epochsOf): a gap before a new epoch's first slot is its.
      if (epochs.at(-1)?.epoch !== slot.epoch)
        epochs.push({ offset: epochs.length === 0 ? offset : nextOffset, epoch: slot.epoch });
      nextOffset = slot.offset + 1;
    }
    // Offsets up to the end that hold nothing (compacted away, then the log truncated there) are
    // stepped over, as the empty batch Kafka keeps for them would be.
    if (!full && !log.slots.some((s) => s.offset >= nextOffset && s.offset < stable))
      nextOffset = Math.max(nextOffset, stable);
    return { records, nextOffset, highWatermark: stable, logStartOffset: log.logStart, bytes, epochs };
  }

  async describePartition(tp: TopicPartition): Promise<PartitionIdentity> {
    const log = this.#log(tp);
    return { topicId: this.#topics.get(tp.topic)?.id ?? null, leaderEpoch: log.epoch };
  }

  /**
   * Kafka's answer, from its leader epoch cache (LeaderEpochFileCache.endOffsetFor): the log end
   * for the current epoch; else where the first later epoch began (the end of the largest epoch
   * at or below the one asked); -1 for an epoch from the future.
   */
  async endOffsetForLeaderEpoch(tp: TopicPartition, leaderEpoch: number): Promise<number> {
    const log = this.#log(tp);
    if (leaderEpoch === log.epoch) return log.end;
    return log.epochStarts.find((e) => e.epoch > leaderEpoch)?.start ?? -1;
  }

  /**
   * Makes writes take time like the real writer's: records land in groups of `records`, each
   * taking `ms` on the clock, and a group is sent only if it can finish by the write's deadline
   * (the rule of KafkaPartitionWriter). Null: a write lands at once, whatever its deadline.
   */
  writeGroups: { readonly records: number; readonly ms: number } | null = null;
  /** Clock time at which each written record landed, in write order. */
  readonly landedAt: number[] = [];

  /** The producer id this cluster's writes carry (FencedWriter's transactional producer for every partition). */
  producerIdOfWrites = 7n;
  /**
   * The next FencedWriter.fence gets a new producer id, as Kafka gives a transactional id once
   * its epoch is exhausted or it expired unused.
   */
  newProducerIdAtNextFence = false;

  write(
    tp: TopicPartition,
    units: CopyUnits,
    stamp?: ProvenanceStamp | null,
    deadline: WriteDeadline = () => Number.POSITIVE_INFINITY,
    /** Writes here have no commit that could outlast the run: nothing to bound. */
    _runDeadline?: number,
  ): Promise<WriteResult> {
    return this.writeAs(this.producerIdOfWrites, tp, units, stamp, deadline);
  }

  /** write, its batches carrying `producerId` (FencedWriter: the id of its own fence). */
  async writeAs(
    producerId: bigint,
    tp: TopicPartition,
    units: CopyUnits,
    stamp?: ProvenanceStamp | null,
    deadline: WriteDeadline = () => Number.POSITIVE_INFINITY,
  ): Promise<WriteResult> {
    this.writes++;
    // Each chunk lands as one batch: a source batch as it came, records in groups of writeGroups.
    let chunks: (readonly MirrorRecord[])[];
    if (isBatches(units)) {
      if (stamp != null) throw new Error("a stamp on source batches: the core must not ask for that");
      chunks = units.map(recordsOf);
    } else {
      const records = stamp == null ? units : units.map((r) => stamped(r, stamp));
      const step = this.writeGroups?.records ?? Math.max(1, records.length);
      chunks = [];
      for (let i = 0; i < records.length; i += step) chunks.push(records.slice(i, i + step));
    }
    const records = chunks.flat();
    await this.hooks.beforeWrite?.(tp, records);
    const baseOffset = this.#log(tp).end;
    let acknowledged = 0;
    for (const chunk of chunks) {
      if (this.writeGroups !== null) {
        if (this.#clock.now() + this.writeGroups.ms > deadline()) break;
        await this.#clock.sleep(this.writeGroups.ms);
      }
      this.#log(tp).appendBatch(chunk, producerId);
      for (const _ of chunk) this.landedAt.push(this.#clock.now());
      acknowledged += chunk.length;
    }
    await this.hooks.afterWrite?.(tp, records.slice(0, acknowledged));
    return { baseOffset, records: records.length, acknowledged };
  }

  /**
   * fetch's data as source batches: one per batch written, whole when none of its records is
   * missing or before `offset` (else decoded); batches after the first only while the limits
   * hold them whole.
   */
  async fetchBatches(tp: TopicPartition, offset: number, limits: FetchLimits): Promise<FetchedBatches> {
    const unlimited = { ...limits, maxRecords: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };
    const all = await this.fetch(tp, offset, unlimited);
    const log = this.#log(tp);
    const slotAt = new Map(log.slots.map((slot) => [slot.offset, slot]));
    const groups: { slot: Slot; records: MirrorRecord[] }[] = [];
    for (const record of all.records) {
      const slot = slotAt.get(record.offset) as Slot;
      const group = groups.at(-1);
      if (group?.slot.batch === slot.batch) group.records.push(record);
      else groups.push({ slot, records: [record] });
    }
    const batches: SourceBatch[] = [];
    let records = 0;
    let bytes = 0;
    let nextOffset = all.nextOffset;
    for (const { slot, records: group } of groups) {
      const size = group.reduce((n, r) => n + recordBytes(r), 0);
      const fits = records + group.length <= limits.maxRecords && bytes + size <= limits.maxBytes;
      if (batches.length > 0 && !fits) {
        nextOffset = (group[0] as MirrorRecord).offset;
        break;
      }
      const whole = group.length === log.batchSizes.get(slot.batch);
      batches.push(sourceBatch(group, slot.producerId, whole));
      records += group.length;
      bytes += size;
    }
    const epochs = (all.epochs ?? []).filter((e) => e.offset < nextOffset || e.offset === offset);
    return { ...all, batches, nextOffset, bytes, epochs };
  }

  contentCrc(batch: SourceBatch): Promise<number> {
    return fakeContentCrc(batch);
  }

  async listTopics(): Promise<TopicInfo[]> {
    return [...this.#topics].map(([name, logs]) => ({ name, partitions: logs.partitions.length }));
  }

  async createTopics(specs: readonly TopicSpec[]): Promise<void> {
    for (const spec of specs) {
      this.createTopicCalls.push({ ...spec });
      this.createTopic(spec.name, spec.partitions, spec.configs);
    }
  }

  /** Topic-level configs set on the topic (a copy; empty for a missing topic). */
  topicConfigs(topic: string): Map<string, string> {
    return new Map(this.#topics.get(topic)?.configs);
  }

  /** Sets topic-level configs by hand, as kafka-configs --alter --add-config would. */
  setTopicConfigs(topic: string, set: Record<string, string>): void {
    const found = this.#topics.get(topic);
    if (found === undefined) throw unknownTopic(topic, "TOPIC_CONFIG_FAILED");
    const configs = found.configs;
    for (const [name, value] of Object.entries(set)) configs.set(name, value);
  }

  /** Adds empty partitions by hand, as kafka-topics --alter --partitions would. */
  growTopic(topic: string, count: number): void {
    const logs = this.#topics.get(topic)?.partitions;
    if (logs === undefined) throw unknownTopic(topic, "PARTITIONS_CREATE_FAILED");
    while (logs.length < count) logs.push(new PartitionLog());
  }

  async describeTopicConfigs(topics: readonly string[]): Promise<Map<string, ReadonlyMap<string, string>>> {
    const answer = new Map<string, ReadonlyMap<string, string>>();
    for (const topic of topics) {
      const configs = this.#topics.get(topic)?.configs;
      if (configs !== undefined) answer.set(topic, new Map(configs));
    }
    return answer;
  }

  async describeBrokerConfigs(names: readonly string[]): Promise<Map<number, ReadonlyMap<string, string>>> {
    const configs = this.brokerConfigs;
    if (configs === "refused") {
      throw new ReplicatorError(
        "KAFKA_FATAL",
        "describe configs of broker 1 failed: CLUSTER_AUTHORIZATION_FAILED",
        {
          details: { brokerId: 1, kafkaErrorCode: 31, kafkaError: "CLUSTER_AUTHORIZATION_FAILED" },
        },
      );
    }
    const asked = (broker: ReadonlyMap<string, string>) =>
      new Map([...broker].filter(([name]) => names.includes(name)));
    return new Map(configs.map((broker, i) => [i + 1, asked(broker)]));
  }

  /**
   * As KafkaClusterAdmin over Kafka's IncrementalAlterConfigs: each topic is applied on its own (a
   * known topic changes even when another of the request is unknown), then the first failure is
   * thrown; an empty set is never sent, so it cannot fail.
   */
  async alterTopicConfigs(
    changes: readonly { topic: string; set: ReadonlyMap<string, string> }[],
  ): Promise<void> {
    let failure: ReplicatorError | undefined;
    for (const change of changes) {
      if (change.set.size === 0) continue;
      this.alterConfigCalls.push({ topic: change.topic, set: new Map(change.set) });
      const found = this.#topics.get(change.topic);
      if (found === undefined) failure ??= unknownTopic(change.topic, "TOPIC_CONFIG_FAILED");
      else for (const [name, value] of change.set) found.configs.set(name, value);
    }
    if (failure !== undefined) throw failure;
  }

  /**
   * As KafkaClusterAdmin over Kafka's CreatePartitions: a count that is not a whole number >= 1 is
   * refused before anything changes; then each topic on its own, the first failure thrown last.
   */
  async createPartitions(changes: readonly { topic: string; count: number }[]): Promise<void> {
    for (const { topic, count } of changes) {
      if (!Number.isSafeInteger(count) || count < 1) {
        throw new ReplicatorError(
          "PARTITIONS_CREATE_FAILED",
          `partition count for topic ${topic} must be a whole number >= 1, not ${count}`,
          { retryable: false, details: { topic, count } },
        );
      }
    }
    let failure: ReplicatorError | undefined;
    for (const change of changes) {
      this.createPartitionCalls.push({ ...change });
      const logs = this.#topics.get(change.topic)?.partitions;
      if (logs === undefined) failure ??= unknownTopic(change.topic, "PARTITIONS_CREATE_FAILED");
      else while (logs.length < change.count) logs.push(new PartitionLog());
    }
    if (failure !== undefined) throw failure;
  }

  async listOffsets(topic: string, partitions: readonly number[]): Promise<PartitionOffsets[]> {
    return partitions.map((partition) => {
      const log = this.#log({ topic, partition });
      return { partition, logStartOffset: log.logStart, logEndOffset: log.end };
    });
  }

  /** One shared instance stands for every writer, so there is nobody to fence: see FencedWriter. */
  readonly fences = false;
  async fence(_tp: TopicPartition, _deadline?: WriteDeadline): Promise<void> {}
  producerId(_tp: TopicPartition): bigint | null {
    return null;
  }
  useTransactionTimeout(_timeout: TransactionTimeout): void {}
  async endOpenTransaction(_tp: TopicPartition, _deadline: WriteDeadline): Promise<OpenTransactionEnd> {
    return "none";
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  #log(tp: TopicPartition): PartitionLog {
    const log = this.#topics.get(tp.topic)?.partitions[tp.partition];
    if (log === undefined) {
      throw new ReplicatorError("KAFKA_FATAL", `unknown topic or partition ${tp.topic}/${tp.partition}`, {
        details: { ...tp },
      });
    }
    return log;
  }

  #checkRange(tp: TopicPartition, log: PartitionLog, offset: number): void {
    if (offset < log.logStart || offset > log.end) {
      throw new ReplicatorError("OFFSET_OUT_OF_RANGE", `offset ${offset} out of range`, {
        details: { ...tp, offset, logStartOffset: log.logStart, logEndOffset: log.end },
      });
    }
  }
}

export function keyOf(tp: TopicPartition): string {
  return `${tp.topic}/${tp.partition}`;
}

/** Records with distinct, non-UTF-8 values so a mix-up or re-encoding shows. */
export function makeRecords(count: number, tag: number, timestamp = 1_700_000_000_000): NewRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    timestamp: timestamp + i,
    key: Buffer.from([0xff, tag & 0xff, (i >> 8) & 0xff, i & 0xff]),
    value: Buffer.from([0xfe, tag & 0xff, (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff]),
    headers: [{ key: Buffer.from("h"), value: Buffer.from([0xc3, 0x28]) }],
  }));
}

function unknownTopic(
  topic: string,
  code: "TOPIC_CONFIG_FAILED" | "PARTITIONS_CREATE_FAILED",
): ReplicatorError {
  return new ReplicatorError(code, `topic ${topic} does not exist: UNKNOWN_TOPIC_OR_PARTITION`, {
    retryable: true,
    details: { topic, kafkaErrorCode: 3, kafkaError: "UNKNOWN_TOPIC_OR_PARTITION" },
  });
}
