import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ConfigSyncPolicy, DEFAULT_CONFIG_SYNC } from "../../../../lib/core/plan/config-sync.js";
import { inSync, topicDrift } from "../../../../lib/core/plan/topic-drift.js";

const topic = { source: "orders", target: "dr.orders", partitions: 8 };

describe("topicDrift", () => {
  it("a missing target is created with the synced source configs", () => {
    const drift = topicDrift({
      topic,
      targetPartitions: undefined,
      sourceConfigs: new Map([
        ["cleanup.policy", "compact"],
        ["min.insync.replicas", "2"],
      ]),
      targetConfigs: new Map(),
      policy: DEFAULT_CONFIG_SYNC,
    });

    assert.equal(drift.partitions, "create");
    assert.equal(drift.targetPartitions, null);
    assert.deepEqual(drift.configs, [{ name: "cleanup.policy", from: null, to: "compact" }]);
    assert.deepEqual(drift.unsynced, [
      {
        name: "min.insync.replicas",
        source: "2",
        target: null,
        why: "never copied: a durability setting of the target's own replicas",
      },
    ]);
    assert.equal(inSync(drift), false);
  });

  it("fewer target partitions grow; more stay; target-only settings are listed as kept", () => {
    const base = {
      topic,
      sourceConfigs: new Map([["retention.ms", "1000"]]),
      targetConfigs: new Map([
        ["retention.ms", "1000"],
        ["retention.bytes", "5"],
      ]),
      policy: DEFAULT_CONFIG_SYNC,
    };

    const fewer = topicDrift({ ...base, targetPartitions: 4 });
    const more = topicDrift({ ...base, targetPartitions: 12 });

    assert.equal(fewer.partitions, "grow");
    assert.equal(more.partitions, "ok");
    assert.deepEqual(more.configs, []);
    assert.deepEqual(more.targetOnly, ["retention.bytes"]);
    assert.equal(inSync(more), true);
  });

  it("names a target compression.type that would recompress target.compression's batches, after sync", () => {
    const zstd: ConfigSyncPolicy = { ...DEFAULT_CONFIG_SYNC, compressionType: "zstd" };
    const drift = (
      sourceConfigs: Map<string, string>,
      targetConfigs: Map<string, string>,
      policy = zstd,
      targetPartitions: number | undefined = 8,
    ) => topicDrift({ topic, targetPartitions, sourceConfigs, targetConfigs, policy }).recompressedAs;
    const lz4 = new Map([["compression.type", "lz4"]]);

    // Sync sets zstd where the source sets a compression.type: nothing left to warn of.
    assert.equal(drift(lz4, lz4), null);
    assert.equal(drift(lz4, new Map(), zstd, undefined), null);
    // Set on the target only, or kept out of sync: it stays, and is named.
    assert.equal(drift(new Map(), lz4), "lz4");
    assert.equal(
      drift(lz4, new Map([["compression.type", "gzip"]]), { ...zstd, deny: ["compression.type"] }),
      "gzip",
    );
    // Kafka's default keeps the batches' codec; so does the codec itself.
    assert.equal(drift(new Map(), new Map([["compression.type", "producer"]])), null);
    assert.equal(drift(new Map(), new Map([["compression.type", "zstd"]])), null);
    // Without target.compression nothing we send has a codec of ours to keep.
    assert.equal(drift(new Map(), lz4, DEFAULT_CONFIG_SYNC), null);
  });
});
