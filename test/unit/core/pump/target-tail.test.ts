/**
 * TargetTail against a target read READ_COMMITTED while another producer keeps transactions open:
 * the fetch never returns anything at or beyond the last stable offset (LSO), our own
 * non-transactional records included, while ListOffsets reports the high watermark.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type {
  FetchedBatches,
  FetchedRecords,
  FetchLimits,
  MirrorRecord,
  PartitionOffsets,
  TopicInfo,
  TopicPartition,
} from "../../../../lib/core/model.js";
import type { ClusterAdmin, PartitionIdentity, SourceReader } from "../../../../lib/core/ports.js";
import { encodeProvenance, type ProvenanceSettings } from "../../../../lib/core/provenance.js";
import { TargetTail } from "../../../../lib/core/pump/target-tail.js";
import { isReplicatorError } from "../../../../lib/errors.js";
import { CapturingLogger } from "../../../helpers/fake-observability.js";

const HEADER = Buffer.from("kafka-mirror.provenance", "ascii");
const SETTINGS: ProvenanceSettings = { header: HEADER, sourceAlias: "idc1", targetAlias: null };
const TP: TopicPartition = { topic: "orders", partition: 0 };

/** One target partition as a READ_COMMITTED reader sees it; offsets without a record are markers. */
class ReadCommittedPartition implements SourceReader, ClusterAdmin {
  readonly records: MirrorRecord[] = [];
  highWatermark = 0;
  /** The first offset of the oldest open transaction; the high watermark when none is open. */
  lastStableOffset = 0;

  /** A record of ours: copied from source offset `sourceOffset`, not transactional. */
  ours(sourceOffset: number): void {
    const value = encodeProvenance({ alias: "idc1", partition: 0, offset: sourceOffset });
    const open = this.#append({ key: null, value: Buffer.from("x"), headers: [{ key: HEADER, value }] });
    if (!open) this.lastStableOffset = this.highWatermark;
  }
  /** Another producer's transactional record; opens its transaction (LSO stays) when none is. */
  otherInTransaction(): void {
    this.#append({ key: null, value: Buffer.from("y"), headers: [] });
  }
  /** The open transaction commits (a marker offset); the LSO moves to `nextOpen`, or the end. */
  commit(nextOpen?: number): void {
    this.highWatermark += 1;
    this.lastStableOffset = nextOpen ?? this.highWatermark;
  }

  // The tail never asks which log it reads; a broker that cannot tell answers like this.
  async describePartition(): Promise<PartitionIdentity> {
    return { topicId: null, leaderEpoch: -1 };
  }
  async endOffsetForLeaderEpoch(): Promise<number> {
    return -1;
  }

  async fetch(_tp: TopicPartition, offset: number, limits: FetchLimits): Promise<FetchedRecords> {
    const visible = this.records.filter((r) => r.offset >= offset && r.offset < this.lastStableOffset);
    // One record per fetch, as the test bed's broker answers one batch per request.
    const records = visible.slice(0, Math.min(1, limits.maxRecords));
    const last = records.at(-1);
    const nextOffset =
      records.length < visible.length && last !== undefined
        ? last.offset + 1
        : Math.max(offset, this.lastStableOffset);
    // As KafkaPartitionReader reports it reading READ_COMMITTED: the end it can reach is the LSO.
    return { records, nextOffset, highWatermark: this.lastStableOffset, logStartOffset: 0, bytes: 0 };
  }
  async fetchBatches(): Promise<FetchedBatches> {
    throw new Error("these tests look at records (target.copy records)");
  }
  async contentCrc(): Promise<number> {
    throw new Error("these tests look at records (target.copy records)");
  }
  async listOffsets(_topic: string, partitions: readonly number[]): Promise<PartitionOffsets[]> {
    return partitions.map((partition) => ({
      partition,
      logStartOffset: 0,
      logEndOffset: this.highWatermark,
    }));
  }
  async listTopics(): Promise<TopicInfo[]> {
    return [{ name: TP.topic, partitions: 1 }];
  }
  async createTopics(): Promise<void> {}
  async describeTopicConfigs(): Promise<Map<string, ReadonlyMap<string, string>>> {
    return new Map();
  }
  async describeBrokerConfigs(): Promise<Map<number, ReadonlyMap<string, string>>> {
    return new Map();
  }
  async alterTopicConfigs(): Promise<void> {}
  async createPartitions(): Promise<void> {}
  async close(): Promise<void> {}

  /** Returns whether a transaction was open before this record. */
  #append(record: Omit<MirrorRecord, "offset" | "timestamp">): boolean {
    const open = this.lastStableOffset < this.highWatermark;
    this.records.push({ ...record, offset: this.highWatermark, timestamp: 0 });
    this.highWatermark += 1;
    return open;
  }
}

function tailOver(target: ReadCommittedPartition, from: number | null, fenced = false): TargetTail {
  return new TargetTail(
    { reader: target, admin: target, logger: new CapturingLogger() },
    TP,
    TP,
    { copy: "records", provenance: SETTINGS },
    from,
    fenced,
  );
}

/** A write of ours as one committed transaction: the record, acknowledged, then its marker. */
function writeCommitted(target: ReadCommittedPartition, tail: TargetTail, sourceOffset: number): void {
  const base = target.highWatermark;
  target.ours(sourceOffset);
  tail.acknowledged(base, 1, sourceOffset);
  target.commit();
}

describe("TargetTail under READ_COMMITTED", () => {
  it("finishes once the LSO passes the end it started with, though overlapping transactions keep it below the high watermark (regression)", async () => {
    // Prepare: ours 0..3 (src 0..3); another producer opens a transaction at 4; then an uncertain
    // write of ours landed at 5..6 (src 4..5): beyond the LSO, invisible to READ_COMMITTED.
    const target = new ReadCommittedPartition();
    for (let src = 0; src < 4; src++) target.ours(src);
    target.otherInTransaction();
    target.ours(4);
    target.ours(5);
    assert.deepEqual([target.lastStableOffset, target.highWatermark], [4, 7]);
    const tail = tailOver(target, 0);

    // Act 1: the look cannot see past the LSO, so it must not conclude anything about 5..6.
    await assert.rejects(tail.refresh(), (error: unknown) =>
      isReplicatorError(error, "TARGET_TRANSACTION_OPEN"),
    );
    assert.equal(tail.uncertain, true, "stopping at the LSO would re-copy source offsets 4 and 5");
    assert.equal(tail.landed, 3);

    // The transaction commits (marker at 7) and the producer opens the next one at 8 at once:
    // the LSO stays below the high watermark from now on.
    target.commit();
    target.otherInTransaction();
    assert.deepEqual([target.lastStableOffset, target.highWatermark], [8, 9]);

    // Act 2
    await tail.refresh();

    // Assess: everything up to the first look's end is known; the newer transaction is not waited for.
    assert.equal(tail.uncertain, false);
    assert.equal(tail.landed, 5);
    assert.equal(tail.position, 8);
  });

  it("says which open transaction it waits for, and up to where", async () => {
    const target = new ReadCommittedPartition();
    target.ours(0);
    target.otherInTransaction();
    target.ours(1);
    const tail = tailOver(target, 0);

    await assert.rejects(tail.refresh(), (error: unknown) => {
      assert.ok(isReplicatorError(error, "TARGET_TRANSACTION_OPEN"), String(error));
      assert.match(
        error.message,
        /orders\/0 has an open transaction at offset 1: records up to 3 are not readable/,
      );
      assert.deepEqual([error.details.lastStableOffset, error.details.goal], [1, 3]);
      return true;
    });
  });

  it("adopts the end without reading when it has no stored position, whatever transactions are open", async () => {
    const target = new ReadCommittedPartition();
    target.ours(0);
    target.otherInTransaction();
    const tail = tailOver(target, null);

    assert.equal(await tail.refresh(), 0);

    assert.equal(tail.uncertain, false);
    assert.equal(tail.position, 2);
  });

  it("looks for a new end after a write fails while an earlier look was waiting", async () => {
    const target = new ReadCommittedPartition();
    target.ours(0);
    target.otherInTransaction();
    target.ours(1);
    const tail = tailOver(target, 0);
    await assert.rejects(tail.refresh());

    // Another uncertain write lands beyond the end the first look had fixed.
    tail.writeFailed();
    target.ours(2);
    target.commit();

    await tail.refresh();
    assert.equal(tail.landed, 2);
    assert.equal(tail.position, target.highWatermark);
  });
});

describe("TargetTail following our own acknowledged writes", () => {
  it("with fencing, follows its writes past their commit markers, so a successor reads only what came after the last checkpoint (regression: it read everything the holder wrote)", async () => {
    const target = new ReadCommittedPartition();
    const tail = tailOver(target, null, true);
    await tail.refresh();
    for (let src = 0; src < 50; src++) writeCommitted(target, tail, src);

    // 50 records and 50 markers: the position is right after the last record.
    assert.equal(tail.position, 99);
    const successor = tailOver(target, tail.position, true);
    assert.equal(await successor.refresh(), 0, "the successor had to read records before the checkpoint");
    assert.equal(successor.landed, -1);
  });

  it("with fencing, skips another producer's records between two writes of ours", async () => {
    const target = new ReadCommittedPartition();
    const tail = tailOver(target, null, true);
    await tail.refresh();
    writeCommitted(target, tail, 0);
    target.otherInTransaction();
    target.commit();
    writeCommitted(target, tail, 1);

    assert.equal(tail.position, 5);
  });

  it("without fencing, leaves a gap before a write for the next look, which may find an earlier holder's late write there", async () => {
    const target = new ReadCommittedPartition();
    const tail = tailOver(target, null, false);
    await tail.refresh();
    writeCommitted(target, tail, 0);
    // A late write of an earlier holder (source offset 7) lands before our next one.
    target.ours(7);
    writeCommitted(target, tail, 1);

    assert.equal(tail.position, 1, "the view skipped a gap it never read");
    const successor = tailOver(target, tail.position, false);
    await successor.refresh();
    assert.equal(successor.landed, 7);
  });

  it("does not move while the view is uncertain", async () => {
    const target = new ReadCommittedPartition();
    const tail = tailOver(target, null, true);
    await tail.refresh();
    writeCommitted(target, tail, 0);
    tail.writeFailed();
    target.ours(1);
    target.commit();
    writeCommitted(target, tail, 2);

    assert.equal(tail.position, 1, "a write after an unknown outcome moved the view past records never read");
  });
});
