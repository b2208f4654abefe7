import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { envVariableName, loadConfigFromEnv } from "../../../lib/config/load.js";
import { isReplicatorError } from "../../../lib/errors.js";

const minimalEnv = {
  KAFKA_MIRROR_SOURCE_BROKERS: "s1:9092,s2:9092",
  KAFKA_MIRROR_TARGET_BROKERS: "t1:9092",
  KAFKA_MIRROR_TOPICS_WHITELIST: ".*",
};

describe("envVariableName", () => {
  it("derives the variable from the field path", () => {
    assert.equal(envVariableName("source", "requestTimeoutMs"), "KAFKA_MIRROR_SOURCE_REQUEST_TIMEOUT_MS");
    assert.equal(envVariableName("leases", "table"), "KAFKA_MIRROR_LEASES_TABLE");
  });
});

describe("loadConfigFromEnv", () => {
  it("reads one variable per field, strings included, and ignores unrelated variables", () => {
    const config = loadConfigFromEnv({
      ...minimalEnv,
      KAFKA_MIRROR_BATCH_MAX_WAIT_MS: "250",
      KAFKA_MIRROR_TARGET_TLS: "true",
      PATH: "/usr/bin",
    });

    assert.deepEqual(config.source.brokers, ["s1:9092", "s2:9092"]);
    assert.equal(config.batch.maxWaitMs, 250);
    assert.equal(config.target.tls, true);
    assert.equal(config.topics.whitelist, ".*");
  });

  it("treats an empty variable as unset so the default applies", () => {
    const config = loadConfigFromEnv({
      ...minimalEnv,
      KAFKA_MIRROR_LEASES_TABLE: "",
      KAFKA_MIRROR_TOPICS_BLACKLIST: "",
    });

    assert.equal(config.leases.table, "kafka-mirror-leases");
    assert.equal(config.topics.blacklist, undefined);
  });

  it("lets single variables override the JSON document", () => {
    const config = loadConfigFromEnv({
      KAFKA_MIRROR_CONFIG: JSON.stringify({
        source: { brokers: ["doc:9092"], alias: "eu" },
        target: { brokers: ["t:9092"] },
        topics: { whitelist: "orders" },
        batch: { maxRecords: 5 },
      }),
      KAFKA_MIRROR_SOURCE_BROKERS: "env:9092",
    });

    assert.deepEqual(config.source.brokers, ["env:9092"]);
    assert.equal(config.source.alias, "eu");
    assert.equal(config.batch.maxRecords, 5);
  });

  it("refuses a misspelt variable by name", () => {
    assert.throws(
      () => loadConfigFromEnv({ ...minimalEnv, KAFKA_MIRROR_SOURCE_BROKER: "x:1" }),
      (error) =>
        isReplicatorError(error, "CONFIG_INVALID") &&
        error.message ===
          "invalid config: KAFKA_MIRROR_SOURCE_BROKER: unknown variable: names no config field",
    );
  });

  it("accepts variables the caller declares as its own", () => {
    const config = loadConfigFromEnv(
      { ...minimalEnv, KAFKA_MIRROR_LOG_LEVEL: "debug" },
      { otherVariables: ["KAFKA_MIRROR_LOG_LEVEL"] },
    );

    assert.equal(config.target.brokers.length, 1);
  });

  it("refuses a document that is not JSON or not an object", () => {
    assert.throws(
      () => loadConfigFromEnv({ KAFKA_MIRROR_CONFIG: "{source:" }),
      (error) =>
        isReplicatorError(error, "CONFIG_INVALID") &&
        /KAFKA_MIRROR_CONFIG: not valid JSON/.test(error.message),
    );
    assert.throws(
      () => loadConfigFromEnv({ KAFKA_MIRROR_CONFIG: "[1]" }),
      (error) =>
        isReplicatorError(error, "CONFIG_INVALID") && /expected a JSON object, got \[1\]/.test(error.message),
    );
  });

  it("passes schema errors through with the field path", () => {
    assert.throws(
      () => loadConfigFromEnv({ ...minimalEnv, KAFKA_MIRROR_TARGET_COMPRESSION: "brotli" }),
      (error) =>
        isReplicatorError(error, "CONFIG_INVALID") && /target\.compression: got "brotli"/.test(error.message),
    );
  });
});
