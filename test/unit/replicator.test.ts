/** The composition root's log lines; nothing here connects (clients connect on first use). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseConfig } from "../../lib/config/schema.js";
import { createDynamoDbClient } from "../../lib/dynamodb/client.js";
import { crc32cImplementation } from "../../lib/kafka/codec/crc32c.js";
import { configSyncPolicy, createReplicator } from "../../lib/replicator.js";
import { CapturingLogger, CapturingMetrics } from "../helpers/fake-observability.js";

function build(source: Record<string, unknown>, provenance = true): CapturingLogger {
  const config = parseConfig({
    source: { brokers: "127.0.0.1:1", ...source },
    target: { brokers: "127.0.0.1:2" },
    topics: { whitelist: "t" },
    provenance: { enabled: provenance },
  });
  const logger = new CapturingLogger();
  const dynamodb = createDynamoDbClient({
    requestTimeoutMs: 100,
    region: "local",
    endpoint: "http://127.0.0.1:1",
  });
  try {
    createReplicator(config, { dynamodb, logger, metrics: new CapturingMetrics(), workerId: "w" });
  } finally {
    dynamodb.destroy();
  }
  return logger;
}

describe("createReplicator", () => {
  it("warns when exactly-once runs on the default source alias, which another source could share", () => {
    const warnings = build({}).at("warn");

    assert.equal(warnings.length, 1);
    assert.match(warnings[0]?.message ?? "", /source\.alias is the default/);
    assert.equal(warnings[0]?.fields.sourceAlias, "source");
  });

  it("does not warn with an alias of its own, or without exactly-once", () => {
    assert.deepEqual(build({ alias: "idc1" }).at("warn"), []);
    assert.deepEqual(build({}, false).at("warn"), []);
  });

  it("says at debug which CRC-32C implementation the codec uses, once per worker built", () => {
    const lines = build({ alias: "idc1" })
      .at("debug")
      .filter((line) => line.message === "crc32c implementation");

    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.fields.implementation, crc32cImplementation());
    assert.match(String(lines[0]?.fields.reason), /./);
  });
});

describe("configSyncPolicy", () => {
  it("carries target.compression as the target's compression.type, and nothing for none", () => {
    const policy = (compression: string) =>
      configSyncPolicy(
        parseConfig({
          source: { brokers: "a:1" },
          target: { brokers: "b:2", compression },
          topics: { whitelist: "t" },
        }),
      );

    assert.equal(policy("zstd").compressionType, "zstd");
    assert.equal(policy("none").compressionType, undefined);
  });
});
