import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lagReport } from "../../../lib/lag/lag-report.js";
import { EmfMetrics } from "../../../lib/observability/emf-metrics.js";
import { MAX_PARTITION_LAG_METRICS } from "../../../lib/observability/metric-names.js";

type Doc = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] };
};

/** The EMF documents `act` writes to stdout (Powertools writes them there, one per line). */
function captureEmf(act: () => void): Doc[] {
  const lines: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    lines.push(
      ...String(chunk)
        .split("\n")
        .filter((l) => l !== ""),
    );
    return true;
  }) as typeof process.stdout.write;
  try {
    act();
  } finally {
    process.stdout.write = write;
  }
  return lines.map((l) => JSON.parse(l) as Doc);
}

describe("EmfMetrics", () => {
  it("sums copies, losses and errors per topic and publishes one document per topic plus totals", () => {
    // Prepare
    const metrics = new EmfMetrics({ serviceName: "KafkaMirror-eu-west-1" });
    metrics.batchCopied({ topic: "A", partition: 0, records: 10, bytes: 1_000, nextOffset: 10 });
    metrics.batchCopied({ topic: "A", partition: 1, records: 5, bytes: 500, nextOffset: 5 });
    metrics.batchCopied({ topic: "B", partition: 0, records: 1, bytes: 7, nextOffset: 1 });
    metrics.recordsLost({ topic: "B", partition: 0, from: 100, to: 130 });
    metrics.partitionError({ topic: "B", partition: 2, code: "RECORD_REJECTED" });

    // Act
    const docs = captureEmf(() => metrics.flush());

    // Assess
    const byTopic = (topic: string) => docs.find((d) => d.Topic === topic);
    assert.equal(docs.length, 4, "A, B, RECORD_REJECTED's failed partitions, totals");
    assert.deepEqual(
      [
        byTopic("A")?.RecordsCopied,
        byTopic("A")?.BytesCopied,
        byTopic("A")?.LostRecords,
        byTopic("A")?.Errors,
      ],
      [15, 1_500, 0, 0],
    );
    assert.deepEqual(
      [byTopic("B")?.RecordsCopied, byTopic("B")?.LostRecords, byTopic("B")?.Errors],
      [1, 30, 1],
    );
    const totals = docs.find((d) => d.TotalErrors !== undefined);
    assert.deepEqual([totals?.TotalLostRecords, totals?.TotalErrors, totals?.PartitionsFailed], [30, 1, 1]);
    assert.equal(totals?.MaxLagRecords, undefined, "no lag was measured");
    for (const doc of docs) {
      const directive = doc._aws.CloudWatchMetrics[0];
      assert.equal(directive?.Namespace, "KafkaMirror");
      assert.equal(doc.service, "KafkaMirror-eu-west-1");
      const own = doc.Topic !== undefined ? ["Topic"] : doc.ErrorCode !== undefined ? ["ErrorCode"] : [];
      assert.deepEqual(directive?.Dimensions, [["service", ...own]]);
    }
  });

  it("counts failed partitions per error code and in a service-wide total, a topic left out apart", () => {
    // Prepare: orders/1 failed twice (a retry failed again), orders/2 once; a topic not mirrored
    const metrics = new EmfMetrics({ serviceName: "svc" });
    metrics.partitionError({ topic: "orders", partition: 1, code: "KAFKA_FATAL" });
    metrics.partitionError({ topic: "orders", partition: 1, code: "KAFKA_FATAL" });
    metrics.partitionError({ topic: "orders", partition: 2, code: "RECORD_REJECTED" });
    metrics.partitionError({ topic: "small", partition: -1, code: "TARGET_PARTITIONS_TOO_FEW" });

    // Act
    const docs = captureEmf(() => metrics.flush());
    const next = captureEmf(() => metrics.flush());

    // Assess
    assert.deepEqual(
      docs
        .filter((d) => d.ErrorCode !== undefined)
        .map((d) => [d.ErrorCode, d.PartitionsFailed, d.partitions, d._aws.CloudWatchMetrics[0]?.Dimensions]),
      [
        ["KAFKA_FATAL", 2, "orders/1", [["service", "ErrorCode"]]],
        ["RECORD_REJECTED", 1, "orders/2", [["service", "ErrorCode"]]],
      ],
    );
    const totals = docs.find((d) => d.TotalErrors !== undefined);
    assert.deepEqual([totals?.PartitionsFailed, totals?.TotalErrors], [3, 4]);
    assert.deepEqual(
      next.map((d) => [d.ErrorCode, d.PartitionsFailed]),
      [[undefined, 0]],
      "a healthy flush publishes 0 under service alone",
    );
  });

  it("publishes lag per topic and its maxima, then starts over after a flush", () => {
    const metrics = new EmfMetrics({ serviceName: "svc" });
    const p = (topic: string, lagRecords: number, lagSeconds: number) => ({
      topic,
      partition: 0,
      lagRecords,
      lagSeconds,
      owned: false,
      stalled: lagSeconds > 100,
    });
    metrics.lagMeasured(lagReport([p("A", 5, 2), p("B", 50, 200)]));

    const docs = captureEmf(() => metrics.flush());

    assert.deepEqual(
      docs
        .filter((d) => d.Topic !== undefined && d.Partition === undefined)
        .map((d) => [d.Topic, d.LagRecords, d.LagSeconds]),
      [
        ["A", 5, 2],
        ["B", 50, 200],
      ],
    );
    const totals = docs.find((d) => d.Topic === undefined);
    assert.deepEqual(
      [totals?.MaxLagRecords, totals?.MaxLagSeconds, totals?.StalledPartitions, totals?.TotalErrors],
      [50, 200, 1, 0],
    );
    // Nothing carried over: only zero totals on the next flush.
    const next = captureEmf(() => metrics.flush());
    assert.deepEqual(
      next.map((d) => [d.Topic, d.TotalLostRecords, d.TotalErrors, d.MaxLagRecords]),
      [[undefined, 0, 0, undefined]],
    );
  });

  it("publishes lag per partition for the 20 most lagging partitions only, with a Partition dimension", () => {
    // Prepare: 30 lagging partitions of topic A (lag 1..30) and two caught up
    const metrics = new EmfMetrics({ serviceName: "svc" });
    const partitions = Array.from({ length: 32 }, (_, partition) => ({
      topic: "A",
      partition,
      lagRecords: Math.max(0, partition - 1),
      lagSeconds: 1,
      owned: true,
      stalled: false,
    }));
    metrics.lagMeasured(lagReport(partitions));

    // Act
    const docs = captureEmf(() => metrics.flush()).filter((d) => d.Partition !== undefined);

    // Assess
    assert.equal(docs.length, MAX_PARTITION_LAG_METRICS);
    assert.equal(MAX_PARTITION_LAG_METRICS, 20);
    assert.deepEqual(docs.map((d) => [d.Partition, d.PartitionLagRecords]).slice(0, 2), [
      ["31", 30],
      ["30", 29],
    ]);
    assert.equal(Math.min(...docs.map((d) => Number(d.PartitionLagRecords))), 11);
    for (const doc of docs) {
      assert.equal(doc.Topic, "A");
      assert.deepEqual(doc._aws.CloudWatchMetrics[0]?.Dimensions, [["service", "Topic", "Partition"]]);
    }
  });

  it("publishes skipped lease items in the totals, only for a period that had some", () => {
    const metrics = new EmfMetrics({ serviceName: "svc" });
    metrics.leaseItemSkipped();
    metrics.leaseItemSkipped();

    const docs = captureEmf(() => metrics.flush());
    const next = captureEmf(() => metrics.flush());

    assert.deepEqual(
      docs.map((d) => [d.Topic, d.LeaseItemsSkipped]),
      [[undefined, 2]],
    );
    assert.equal(next[0]?.LeaseItemsSkipped, undefined);
  });

  it("publishes another producer's batches per topic, only for a period that had some", () => {
    const metrics = new EmfMetrics({ serviceName: "svc" });
    metrics.batchCopied({ topic: "A", partition: 0, records: 1, bytes: 10, nextOffset: 1 });
    metrics.batchCopied({ topic: "B", partition: 0, records: 1, bytes: 10, nextOffset: 1 });
    metrics.otherWriterSeen({ topic: "A", partition: 0, targetTopic: "A", batches: 2 });
    metrics.otherWriterSeen({ topic: "A", partition: 3, targetTopic: "A", batches: 1 });

    const docs = captureEmf(() => metrics.flush());
    const next = captureEmf(() => {
      metrics.batchCopied({ topic: "A", partition: 0, records: 1, bytes: 10, nextOffset: 2 });
      metrics.flush();
    });

    assert.deepEqual(
      docs.filter((d) => d.Topic !== undefined).map((d) => [d.Topic, d.OtherWriterBatches]),
      [
        ["A", 3],
        ["B", undefined],
      ],
    );
    assert.equal(next.find((d) => d.Topic === "A")?.OtherWriterBatches, undefined);
  });

  it("publishes the group offset sync's counts with the totals, zeros included, once per flush", () => {
    const metrics = new EmfMetrics({ serviceName: "svc" });
    metrics.groupSyncMeasured({ synced: 3, failed: 1, active: 2, maxNotCopied: 40 });
    const [totals] = captureEmf(() => metrics.flush());
    assert.deepEqual(
      [
        totals?.GroupsSynced,
        totals?.GroupSyncErrors,
        totals?.GroupsActiveOnTarget,
        totals?.GroupMaxRecordsNotCopied,
      ],
      [3, 1, 2, 40],
    );
    metrics.groupSyncMeasured({ synced: 0, failed: 0, active: 0, maxNotCopied: 0 });
    const [healthy] = captureEmf(() => metrics.flush());
    assert.equal(healthy?.GroupSyncErrors, 0, "a healthy run publishes 0, so silence can alarm");
    const [after] = captureEmf(() => metrics.flush());
    assert.equal(after?.GroupSyncErrors, undefined);
  });
});
