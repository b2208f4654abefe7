import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TopicPartition } from "../../../lib/core/model.js";
import type { SourceReader } from "../../../lib/core/ports.js";
import { retryingAdmin, retryingReader } from "../../../lib/core/retrying-ports.js";
import { createTopicSelector } from "../../../lib/topics/selection.js";
import { comparePartition } from "../../../lib/verify/compare-partition.js";
import { verifyMirror } from "../../../lib/verify/verify-mirror.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords, type NewRecord } from "../../helpers/fake-cluster.js";
import { flakyAdmin, flakyReader } from "../../helpers/flaky.js";

const TP: TopicPartition = { topic: "BIN-BI-TOPIC", partition: 0 };

/** A source partition of `count` records and a target that starts as an exact copy. */
function clusters(count: number, edit: (records: NewRecord[]) => NewRecord[] = (r) => r) {
  const clock = new FakeClock();
  const source = new InMemoryCluster(clock);
  const target = new InMemoryCluster(clock);
  source.createTopic(TP.topic, 1);
  target.createTopic(TP.topic, 1);
  const records = makeRecords(count, 7);
  source.append(TP, records);
  target.append(TP, edit([...records]));
  return { clock, source: { reader: source, admin: source }, target: { reader: target, admin: target } };
}

/** The target as a read_committed reader sees it while a transaction from `lso` on is open. */
function readCommitted(cluster: InMemoryCluster, lso: number): SourceReader {
  return {
    fetch: async (tp, offset, limits) => {
      const fetched = await cluster.fetch(tp, offset, limits);
      const records = fetched.records.filter((r) => r.offset < lso);
      return {
        ...fetched,
        records,
        nextOffset: Math.min(fetched.nextOffset, Math.max(offset, lso)),
        highWatermark: lso,
      };
    },
    fetchBatches: () => Promise.reject(new Error("verify reads records")),
    contentCrc: () => Promise.reject(new Error("verify reads records")),
    describePartition: (tp) => cluster.describePartition(tp),
    endOffsetForLeaderEpoch: (tp, epoch) => cluster.endOffsetForLeaderEpoch(tp, epoch),
    close: () => cluster.close(),
  };
}

describe("comparePartition", () => {
  it("compares up to the last stable offset when the target has a transaction open at its end", async () => {
    const { source, target } = clusters(50);
    const inTransaction = target.reader as InMemoryCluster;
    inTransaction.append(TP, makeRecords(5, 8));
    const result = await comparePartition(
      source,
      { reader: readCommitted(inTransaction, 50), admin: target.admin },
      TP,
      TP,
    );
    assert.equal(result.mismatch, null);
    assert.equal(result.targetRecords, 50);
  });

  it("finds identical partitions identical, with equal counts, ranges and digests", async () => {
    const { source, target } = clusters(50);
    const result = await comparePartition(source, target, TP, TP);
    assert.equal(result.mismatch, null);
    assert.equal(result.sourceRecords, 50);
    assert.equal(result.targetRecords, 50);
    assert.deepEqual(result.sourceRange, { from: 0, to: 50 });
    assert.equal(result.sourceDigest, result.targetDigest);
  });

  it("reports an altered value at its offsets", async () => {
    const { source, target } = clusters(50, (r) =>
      r.map((rec, i) => (i === 17 ? { ...rec, value: Buffer.from([0x00]) } : rec)),
    );
    const result = await comparePartition(source, target, TP, TP);
    assert.equal(result.mismatch?.kind, "altered");
    assert.equal(result.mismatch?.sourceOffset, 17);
    assert.equal(result.mismatch?.targetOffset, 17);
    assert.notEqual(result.sourceDigest, result.targetDigest);
  });

  it("reports a changed header or timestamp as altered (not only key and value)", async () => {
    const header = clusters(10, (r) =>
      r.map((rec, i) => (i === 3 ? { ...rec, headers: [{ key: Buffer.from("h"), value: null }] } : rec)),
    );
    assert.equal((await comparePartition(header.source, header.target, TP, TP)).mismatch?.sourceOffset, 3);
    const time = clusters(10, (r) =>
      r.map((rec, i) => (i === 4 ? { ...rec, timestamp: rec.timestamp + 1 } : rec)),
    );
    assert.equal((await comparePartition(time.source, time.target, TP, TP)).mismatch?.sourceOffset, 4);
  });

  it("reports a record missing in the middle by its source offset", async () => {
    const { source, target } = clusters(50, (r) => r.filter((_, i) => i !== 20));
    const result = await comparePartition(source, target, TP, TP);
    assert.equal(result.mismatch?.kind, "missing");
    assert.equal(result.mismatch?.sourceOffset, 20);
    assert.equal(result.targetRecords, 49);
  });

  it("reports records missing at the end", async () => {
    const { source, target } = clusters(50, (r) => r.slice(0, 45));
    const result = await comparePartition(source, target, TP, TP);
    assert.equal(result.mismatch?.kind, "missing");
    assert.equal(result.mismatch?.sourceOffset, 45);
  });

  it("reports a duplicated record with the target offset of the copy", async () => {
    const { source, target } = clusters(50, (r) => [...r.slice(0, 31), r[30] as NewRecord, ...r.slice(31)]);
    const result = await comparePartition(source, target, TP, TP);
    assert.equal(result.mismatch?.kind, "duplicated");
    assert.equal(result.mismatch?.sourceOffset, 30);
    assert.equal(result.mismatch?.targetOffset, 31);
    assert.equal(result.targetRecords, 51);
  });

  it("reports a duplicate of the last record, and an extra record, past the source's end", async () => {
    const dup = clusters(5, (r) => [...r, r[4] as NewRecord]);
    assert.equal((await comparePartition(dup.source, dup.target, TP, TP)).mismatch?.kind, "duplicated");
    const extra = clusters(5, (r) => [...r, ...makeRecords(1, 9)]);
    const result = await comparePartition(extra.source, extra.target, TP, TP);
    assert.equal(result.mismatch?.kind, "extra");
    assert.equal(result.mismatch?.targetOffset, 5);
  });

  it("compares from --from-offset on both sides, ignoring earlier differences", async () => {
    const { source, target } = clusters(50, (r) =>
      r.map((rec, i) => (i === 3 ? { ...rec, value: Buffer.from([0x01]) } : rec)),
    );
    const result = await comparePartition(source, target, TP, TP, { fromOffset: 10 });
    assert.equal(result.mismatch, null);
    assert.deepEqual(result.sourceRange, { from: 10, to: 50 });
    assert.equal(result.sourceRecords, 40);
  });

  it("ignores the header the mirror appends to each copy, and only that one, at the end", async () => {
    const mark = { key: Buffer.from("kafka-mirror.provenance"), value: Buffer.from([1, 2, 3]) };
    const { source, target } = clusters(20, (r) =>
      r.map((rec) => ({ ...rec, headers: [...rec.headers, mark] })),
    );
    const options = { mirrorHeader: mark.key };
    const result = await comparePartition(source, target, TP, TP, options);
    assert.equal(result.mismatch, null);
    assert.equal(result.sourceDigest, result.targetDigest);
    // Without being told, the extra header is a difference.
    assert.equal((await comparePartition(source, target, TP, TP)).mismatch?.kind, "altered");
    // A source record that itself ends with such a header keeps it: only the target's copy is stripped.
    const moved = clusters(3, (r) => r.map((rec) => ({ ...rec, headers: [mark, ...rec.headers] })));
    assert.equal(
      (await comparePartition(moved.source, moved.target, TP, TP, options)).mismatch?.kind,
      "altered",
    );
  });
});

describe("verifyMirror", () => {
  it("covers every partition of the selected topics and reports a missing target topic", async () => {
    const clock = new FakeClock();
    const source = new InMemoryCluster(clock);
    const target = new InMemoryCluster(clock);
    for (const topic of ["BIN-BI-TOPIC", "PUSH-BI-TOPIC", "SCRIPT-BI-TOPIC"]) source.createTopic(topic, 2);
    target.createTopic("BIN-BI-TOPIC", 2);
    source.append({ topic: "BIN-BI-TOPIC", partition: 1 }, makeRecords(3, 1));
    target.append({ topic: "BIN-BI-TOPIC", partition: 1 }, makeRecords(3, 1));
    const mapping = createTopicSelector({
      whitelist: "BIN-BI-TOPIC|PUSH-BI-TOPIC",
      rename: "identity",
      sourceAlias: "source",
    });
    const report = await verifyMirror({
      source: { reader: source, admin: source },
      target: { reader: target, admin: target },
      mapping,
    });
    assert.deepEqual(
      report.partitions.map((p) => [p.source.topic, p.source.partition, p.mismatch]),
      [
        ["BIN-BI-TOPIC", 0, null],
        ["BIN-BI-TOPIC", 1, null],
      ],
    );
    assert.deepEqual(
      report.topicProblems.map((p) => p.source),
      ["PUSH-BI-TOPIC"],
    );
    assert.equal(report.ok, false);
  });
});

describe("verifyMirror over retrying sides", () => {
  it("compares to the end although each side's first listing, offsets and fetch fail transiently", async () => {
    // Prepare: the sides as the CLI hands them out, over clusters that blink once per call kind.
    const { clock, source, target } = clusters(40);
    const retry = { clock, deadline: () => clock.now() + 10_000 };
    const admins = [flakyAdmin(source.admin), flakyAdmin(target.admin)] as const;
    const readers = [flakyReader(source.reader), flakyReader(target.reader)] as const;
    const side = (i: 0 | 1) => ({
      admin: retryingAdmin(admins[i], retry),
      reader: retryingReader(readers[i], retry),
    });

    // Act
    const report = await verifyMirror({
      source: side(0),
      target: side(1),
      mapping: createTopicSelector({ whitelist: TP.topic, rename: "identity", sourceAlias: "s" }),
    });

    // Assess
    for (const admin of admins) {
      assert.deepEqual([admin.failed.get("listTopics"), admin.failed.get("listOffsets")], [1, 1]);
    }
    for (const reader of readers) assert.equal(reader.failed.get("fetch"), 1);
    assert.equal(report.ok, true);
    assert.deepEqual(
      report.partitions.map((p) => [p.sourceRecords, p.targetRecords]),
      [[40, 40]],
    );
  });
});
