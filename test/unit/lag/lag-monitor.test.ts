import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { measureLag } from "../../../lib/lag/lag-monitor.js";
import { createTopicSelector } from "../../../lib/topics/selection.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster } from "../../helpers/fake-cluster.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { flakyAdmin, flakyReader } from "../../helpers/flaky.js";
import { InMemoryLeaseStore } from "../../helpers/memory-lease-store.js";

function records(n: number, firstTimestamp: number) {
  return Array.from({ length: n }, (_, i) => ({
    timestamp: firstTimestamp + i,
    key: null,
    value: Buffer.from([i & 0xff]),
    headers: [],
  }));
}

describe("measureLag", () => {
  it("creates lease items for new matching topics and measures every partition, held or not", async () => {
    // Prepare
    const clock = new FakeClock();
    const now = clock.now();
    const source = new InMemoryCluster(clock);
    source.createTopic("ORDERS", 2);
    source.createTopic("AUDIT", 1);
    source.append({ topic: "ORDERS", partition: 0 }, records(10, now - 120_000));
    source.append({ topic: "ORDERS", partition: 1 }, records(4, now - 30_000));
    source.append({ topic: "AUDIT", partition: 0 }, records(7, now - 1_000));
    const leases = new InMemoryLeaseStore();
    await leases.ensure([{ topic: "ORDERS", partition: 1 }]);
    const [held] = await leases.list();
    assert.ok(held);
    await leases.claim(held, "w1", now + 60_000);
    const options = {
      sourceAdmin: source,
      source,
      leases,
      mapping: createTopicSelector({ whitelist: "ORDERS", rename: "identity", sourceAlias: "s" }),
      logger: new CapturingLogger(),
      startFrom: "earliest" as const,
      stallAfterMs: 300_000,
      now: () => clock.now(),
      retry: { clock, deadline: now + 60_000 },
    };

    // Act
    const { report, discovered } = await measureLag(options);

    // Assess
    assert.deepEqual(discovered, [{ topic: "ORDERS", partition: 0 }]);
    assert.deepEqual(
      (await leases.list()).map((l) => `${l.topic}:${l.partition}`).sort(),
      ["ORDERS:0", "ORDERS:1"],
      "no lease item for the unlisted topic",
    );
    assert.deepEqual(
      report.partitions.map((p) => [p.partition, p.lagRecords, p.lagSeconds, p.owned]),
      [
        [0, 10, 120, false],
        [1, 4, 30, true],
      ],
    );
    assert.deepEqual(report.topics, [
      { topic: "ORDERS", lagRecords: 14, lagSeconds: 120, stalledPartitions: 0 },
    ]);

    // Act again: nothing new to discover.
    assert.deepEqual((await measureLag(options)).discovered, []);
  });

  it("does not date lag by a record without a timestamp (magic 0: -1), but by the lease's progress", async () => {
    // Prepare
    const clock = new FakeClock();
    const now = clock.now();
    const source = new InMemoryCluster(clock);
    source.createTopic("ORDERS", 1);
    source.append(
      { topic: "ORDERS", partition: 0 },
      records(3, -1).map((r) => ({ ...r, timestamp: -1 })),
    );
    const leases = new InMemoryLeaseStore();

    // Act
    const { report } = await measureLag({
      sourceAdmin: source,
      source,
      leases,
      mapping: createTopicSelector({ whitelist: "ORDERS", rename: "identity", sourceAlias: "s" }),
      logger: new CapturingLogger(),
      startFrom: "earliest",
      stallAfterMs: 300_000,
      now: () => clock.now(),
      retry: { clock, deadline: now + 60_000 },
    });

    // Assess: 3 records behind, no progress recorded yet, so no age rather than ~56 years.
    assert.deepEqual(
      report.partitions.map((p) => [p.lagRecords, p.lagSeconds]),
      [[3, 0]],
    );
  });

  it("retries listing topics, offsets and dating after a transient failure, within its deadline", async () => {
    // Prepare: each Kafka call fails once with a retryable error (a broker briefly unavailable).
    const clock = new FakeClock();
    const now = clock.now();
    const cluster = new InMemoryCluster(clock);
    cluster.createTopic("ORDERS", 1);
    cluster.append({ topic: "ORDERS", partition: 0 }, records(5, now - 60_000));
    const sourceAdmin = flakyAdmin(cluster);
    const source = flakyReader(cluster);
    const logger = new CapturingLogger();
    const retried: string[] = [];

    // Act
    const { report } = await measureLag({
      sourceAdmin,
      source,
      leases: new InMemoryLeaseStore(),
      mapping: createTopicSelector({ whitelist: "ORDERS", rename: "identity", sourceAlias: "s" }),
      logger,
      startFrom: "earliest",
      stallAfterMs: 300_000,
      now: () => clock.now(),
      retry: { clock, deadline: now + 60_000, onRetry: (what) => retried.push(what) },
    });

    // Assess
    assert.deepEqual(
      [
        sourceAdmin.failed.get("listTopics"),
        sourceAdmin.failed.get("listOffsets"),
        source.failed.get("fetch"),
      ],
      [1, 1, 1],
    );
    assert.deepEqual(retried, ["listing topics", "listing offsets of ORDERS", "fetching ORDERS/0"]);
    assert.deepEqual(
      report.partitions.map((p) => [p.partition, p.lagRecords]),
      [[0, 5]],
    );
    assert.ok((report.partitions[0]?.lagSeconds ?? 0) >= 60, "dated by the record read on the retry");
  });

  it("gives up at its deadline and throws the last failure", async () => {
    const clock = new FakeClock();
    const cluster = new InMemoryCluster(clock);
    const deadline = clock.now() + 5_000;

    await assert.rejects(
      measureLag({
        sourceAdmin: flakyAdmin(cluster, { failures: Number.POSITIVE_INFINITY }),
        source: cluster,
        leases: new InMemoryLeaseStore(),
        mapping: createTopicSelector({ whitelist: ".*", rename: "identity", sourceAlias: "s" }),
        logger: new CapturingLogger(),
        startFrom: "earliest",
        stallAfterMs: 300_000,
        retry: { clock, deadline },
      }),
      { code: "KAFKA_RETRIABLE" },
    );
    assert.ok(clock.now() <= deadline, "no attempt after the deadline");
  });
});
