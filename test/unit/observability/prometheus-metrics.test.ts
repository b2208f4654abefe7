/** The Prometheus adapter: the worker's events as MM2-named series in the text exposition. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { escapeLabel, PrometheusMetrics } from "../../../lib/observability/prometheus-metrics.js";
import { FakeClock } from "../../helpers/fake-clock.js";

function samples(text: string): Map<string, number> {
  return new Map(
    text
      .split("\n")
      .filter((l) => l !== "" && !l.startsWith("#"))
      .map((l) => {
        const at = l.lastIndexOf(" ");
        return [l.slice(0, at), Number(l.slice(at + 1))] as const;
      }),
  );
}

describe("PrometheusMetrics", () => {
  it("counts records and bytes per topic and keeps lag, latency and record age per partition", async () => {
    // Prepare
    const clock = new FakeClock(1_000_000, { autoAdvance: false });
    const metrics = new PrometheusMetrics({ clock, partitionsHeld: async () => 3 });

    // Act
    metrics.batchCopied({
      topic: "A",
      partition: 1,
      records: 10,
      bytes: 1_000,
      nextOffset: 110,
      highWatermark: 150,
      newestTimestamp: 999_000,
      fetchedAt: 999_800,
    });
    metrics.batchCopied({
      topic: "A",
      partition: 0,
      records: 5,
      bytes: 500,
      nextOffset: 5,
      highWatermark: 5,
    });
    metrics.partitionError({ topic: "A", partition: 0, code: "RECORD_REJECTED" });
    metrics.otherWriterSeen({ topic: "A", partition: 1, targetTopic: "A", batches: 2 });
    metrics.batchCopied({ topic: "B", partition: 0, records: 1, bytes: 10, nextOffset: 1 });
    const text = await metrics.render();

    // Assess
    const values = samples(text);
    assert.equal(values.get('kafka_mirror_records_total{topic="A"}'), 15);
    assert.equal(values.get('kafka_mirror_bytes_total{topic="A"}'), 1_500);
    assert.equal(values.get('kafka_mirror_lag_records{topic="A",partition="0"}'), 0);
    assert.equal(values.get('kafka_mirror_lag_records{topic="A",partition="1"}'), 40);
    assert.equal(values.get('kafka_mirror_replication_latency_ms{topic="A",partition="1"}'), 1_000);
    assert.equal(values.get('kafka_mirror_record_age_ms{topic="A",partition="1"}'), 800);
    assert.equal(values.get('kafka_mirror_partition_errors_total{topic="A",code="RECORD_REJECTED"}'), 1);
    assert.equal(values.get("kafka_mirror_partitions_held"), 3);
    assert.equal(values.get('kafka_mirror_other_writer_batches_total{topic="A"}'), 2);
    assert.equal(values.has('kafka_mirror_other_writer_batches_total{topic="B"}'), false);
    assert.match(text, /^# TYPE kafka_mirror_records_total counter$/m);
    assert.match(text, /^# TYPE kafka_mirror_lag_records gauge$/m);
    assert.equal(values.has('kafka_mirror_replication_latency_ms{topic="A",partition="0"}'), false);
  });

  it("escapes label values as the exposition format says", () => {
    assert.equal(escapeLabel('a"b\\c\nd'), 'a\\"b\\\\c\\nd');
  });
});
