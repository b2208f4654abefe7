import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError, ReplicatorError } from "../../../lib/errors.js";
import { negotiateVersion, translateKafkajsError } from "../../../lib/kafka/connection.js";
import { KafkaPartitionError } from "../../../lib/kafka/error-codes.js";
import type { KafkajsBroker } from "../../../lib/kafka/kafkajs-internals.js";

function brokerSupporting(apiKey: number, minVersion: number, maxVersion: number): KafkajsBroker {
  return { nodeId: 1, versions: { [apiKey]: { minVersion, maxVersion } } } as unknown as KafkajsBroker;
}

describe("negotiateVersion", () => {
  it("picks the newest implemented version the broker supports", () => {
    assert.equal(negotiateVersion(brokerSupporting(0, 0, 10), "Produce", 0, [7, 6, 5, 4, 3]), 7);
    assert.equal(negotiateVersion(brokerSupporting(0, 0, 5), "Produce", 0, [7, 6, 5, 4, 3]), 5);
  });

  it("fails with KAFKA_FATAL when there is no common version", () => {
    assert.throws(
      () => negotiateVersion(brokerSupporting(1, 0, 10), "Fetch", 1, [11]),
      (error) => isReplicatorError(error, "KAFKA_FATAL") && error.details.apiName === "Fetch",
    );
    assert.throws(() => negotiateVersion(brokerSupporting(0, 0, 10), "Fetch", 1, [11]), ReplicatorError);
  });
});

describe("translateKafkajsError", () => {
  it("keeps a ReplicatorError as it is", () => {
    const original = new ReplicatorError("OFFSET_OUT_OF_RANGE", "x");

    assert.equal(translateKafkajsError(original, "fetch"), original);
  });

  it("turns a retriable Kafka code into KAFKA_RETRIABLE naming the error, keeping the cause", () => {
    const cause = new KafkaPartitionError(6);

    const error = translateKafkajsError(cause, "fetch t/0", { topic: "t" });

    assert.equal(error.code, "KAFKA_RETRIABLE");
    assert.equal(error.cause, cause);
    assert.match(error.message, /NOT_LEADER_OR_FOLLOWER/);
    assert.deepEqual(error.details, { topic: "t", kafkaErrorCode: 6, kafkaError: "NOT_LEADER_OR_FOLLOWER" });
  });

  it("turns anything unknown into KAFKA_FATAL", () => {
    assert.equal(translateKafkajsError(new TypeError("bug"), "fetch").code, "KAFKA_FATAL");
    assert.equal(translateKafkajsError(new KafkaPartitionError(29), "fetch").code, "KAFKA_FATAL");
  });
});
