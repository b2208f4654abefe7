import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  assertConfigSyncPolicy,
  configChanges,
  configsForCreate,
  DEFAULT_CONFIG_SYNC,
  MAX_MESSAGE_BYTES_HEADROOM,
} from "../../../../lib/core/plan/config-sync.js";

const compacted = new Map([
  ["cleanup.policy", "compact"],
  ["min.compaction.lag.ms", "60000"],
  ["retention.ms", "-1"],
  ["min.insync.replicas", "2"],
  ["leader.replication.throttled.replicas", "0:1,1:2"],
  ["message.timestamp.type", "LogAppendTime"],
  ["confluent.placement.constraints", "{}"],
]);

describe("config sync", () => {
  it("creates a copy of a compacted topic compacted, with its retention, and nothing placement-bound", () => {
    // Act
    const configs = configsForCreate(compacted, DEFAULT_CONFIG_SYNC);

    // Assess
    assert.deepEqual(
      [...configs],
      [
        ["cleanup.policy", "compact"],
        ["min.compaction.lag.ms", "60000"],
        ["retention.ms", "-1"],
      ],
    );
  });

  it("sets only what differs and never deletes a target-only setting", () => {
    const source = new Map([
      ["retention.ms", "86400000"],
      ["cleanup.policy", "delete"],
    ]);
    const target = new Map([
      ["retention.ms", "3600000"],
      ["cleanup.policy", "delete"],
      ["retention.bytes", "1073741824"],
    ]);

    assert.deepEqual(configChanges(source, target, DEFAULT_CONFIG_SYNC), [
      { name: "retention.ms", from: "3600000", to: "86400000" },
    ]);
  });

  it("gives max.message.bytes headroom for the provenance header and never lowers it", () => {
    const source = new Map([["max.message.bytes", "4194304"]]);
    const raised = String(4194304 + MAX_MESSAGE_BYTES_HEADROOM);

    assert.deepEqual(
      configChanges(source, new Map([["max.message.bytes", "1048588"]]), DEFAULT_CONFIG_SYNC),
      [{ name: "max.message.bytes", from: "1048588", to: raised }],
    );
    assert.deepEqual(
      configChanges(source, new Map([["max.message.bytes", "8388608"]]), DEFAULT_CONFIG_SYNC),
      [],
    );
    assert.deepEqual(
      configChanges(source, new Map([["max.message.bytes", raised]]), DEFAULT_CONFIG_SYNC),
      [],
    );
  });

  it("gives compression.type target.compression's codec where it is set: the source's would recompress what we send", () => {
    const source = new Map([
      ["compression.type", "lz4"],
      ["retention.ms", "1000"],
    ]);
    const zstd = { ...DEFAULT_CONFIG_SYNC, compressionType: "zstd" };

    assert.deepEqual(configsForCreate(source, zstd).get("compression.type"), "zstd");
    assert.deepEqual(configChanges(source, new Map([["compression.type", "lz4"]]), zstd), [
      { name: "compression.type", from: "lz4", to: "zstd" },
      { name: "retention.ms", from: null, to: "1000" },
    ]);
    assert.deepEqual(configChanges(source, new Map([["compression.type", "lz4"]]), DEFAULT_CONFIG_SYNC), [
      { name: "retention.ms", from: null, to: "1000" },
    ]);
    // Not set on the source, or not synced: left alone (topicDrift reports a conflict).
    assert.deepEqual(configChanges(new Map([["retention.ms", "1000"]]), new Map(), zstd), [
      { name: "retention.ms", from: null, to: "1000" },
    ]);
    assert.deepEqual(configChanges(source, new Map(), { ...zstd, deny: ["compression.type"] }), [
      { name: "retention.ms", from: null, to: "1000" },
    ]);
  });

  it("follows the allow and deny lists, and copies nothing when off", () => {
    const source = new Map([
      ["retention.ms", "1000"],
      ["segment.ms", "2000"],
      ["flush.ms", "3000"],
    ]);

    assert.deepEqual(
      configChanges(source, new Map(), {
        enabled: true,
        allow: ["flush.ms", "segment.ms"],
        deny: ["segment.ms"],
      }).map((c) => c.name),
      ["flush.ms"],
    );
    assert.deepEqual(configChanges(source, new Map(), { ...DEFAULT_CONFIG_SYNC, enabled: false }), []);
  });

  it("refuses an allow list naming a setting that is never copied, naming it and why", () => {
    assert.throws(
      () =>
        assertConfigSyncPolicy({
          enabled: true,
          allow: ["retention.ms", "min.insync.replicas", "message.timestamp.type"],
          deny: [],
        }),
      (error: Error & { code?: string }) =>
        error.code === "CONFIG_INVALID" &&
        /min\.insync\.replicas \(a durability setting/.test(error.message) &&
        /message\.timestamp\.type \(would rewrite/.test(error.message) &&
        !/retention\.ms/.test(error.message),
    );
  });
});
