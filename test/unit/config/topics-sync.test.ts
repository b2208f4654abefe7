import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadConfigFromEnv } from "../../../lib/config/load.js";
import { parseConfig } from "../../../lib/config/schema.js";
import { ReplicatorError } from "../../../lib/errors.js";

const minimal = (topics: Record<string, unknown>) => ({
  source: { brokers: "s:9092" },
  target: { brokers: "t:9092" },
  topics: { whitelist: "A", ...topics },
});

function issuesOf(input: unknown): { path: string; message: string }[] {
  try {
    parseConfig(input);
  } catch (error) {
    assert.ok(error instanceof ReplicatorError && error.code === "CONFIG_INVALID");
    return error.details.issues as { path: string; message: string }[];
  }
  assert.fail("expected CONFIG_INVALID");
}

describe("topics: discovery and config sync settings", () => {
  it("takes allow and deny lists as lists or comma-separated strings (environment variables)", () => {
    const config = loadConfigFromEnv({
      KAFKA_MIRROR_SOURCE_BROKERS: "s:9092",
      KAFKA_MIRROR_TARGET_BROKERS: "t:9092",
      KAFKA_MIRROR_TOPICS_WHITELIST: "A",
      KAFKA_MIRROR_TOPICS_CONFIG_SYNC_ALLOW: "retention.ms, cleanup.policy",
      KAFKA_MIRROR_TOPICS_CONFIG_SYNC_DENY: "cleanup.policy",
      KAFKA_MIRROR_TOPICS_DISCOVERY_INTERVAL_MS: "5000",
      KAFKA_MIRROR_TOPICS_CONFIG_SYNC: "false",
    });

    assert.deepEqual(config.topics.configSyncAllow, ["retention.ms", "cleanup.policy"]);
    assert.deepEqual(config.topics.configSyncDeny, ["cleanup.policy"]);
    assert.equal(config.topics.discoveryIntervalMs, 5000);
    assert.equal(config.topics.configSync, false);
  });

  it("refuses an allow list with a setting that is never copied, naming it, its position and why", () => {
    const issues = issuesOf(
      minimal({
        configSyncAllow: ["retention.ms", "min.insync.replicas", "confluent.placement.constraints"],
      }),
    );

    assert.deepEqual(
      issues.map((i) => i.path),
      ["topics.configSyncAllow[1]", "topics.configSyncAllow[2]"],
    );
    assert.match(issues[0]?.message ?? "", /min\.insync\.replicas is never copied \(a durability setting/);
  });

  it("refuses a discovery interval under a second and config names Kafka cannot have", () => {
    const issues = issuesOf(minimal({ discoveryIntervalMs: 500, configSyncDeny: ["retention ms"] }));

    assert.deepEqual(
      issues.map((i) => i.path),
      ["topics.discoveryIntervalMs", "topics.configSyncDeny[0]"],
    );
    assert.match(issues[0]?.message ?? "", /expected an integer from 1000 to 3600000, got 500/);
    assert.match(
      issues[1]?.message ?? "",
      /expected a Kafka config name of \[a-zA-Z0-9._-\], got "retention ms"/,
    );
  });
});
