import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { measureLag } from "../../../lib/lag/lag-monitor.js";
import { createTopicSelector } from "../../../lib/topics/selection.js";
import { CapturingLogger, FakeClock, InMemoryCluster, InMemoryLeaseStore } from "../../helpers/fakes.js";

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
});
