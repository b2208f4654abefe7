import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KafkaErrorCode, KafkaPartitionError, kafkaError } from "../../../../lib/kafka/wire/error-codes.js";

describe("kafkaError", () => {
  it("names codes as Apache Kafka does and marks leadership and timeout errors retriable", () => {
    assert.deepEqual(kafkaError(6), { code: 6, name: "NOT_LEADER_OR_FOLLOWER", retriable: true });
    assert.deepEqual(kafkaError(7), { code: 7, name: "REQUEST_TIMED_OUT", retriable: true });
    assert.deepEqual(kafkaError(19), { code: 19, name: "NOT_ENOUGH_REPLICAS", retriable: true });
  });

  it("marks rejections and producer-state errors not retriable", () => {
    for (const code of [1, 10, 18, 32, 45, 46, 47, 59, 87]) {
      assert.equal(kafkaError(code).retriable, false, `code ${code}`);
    }
  });

  it("treats a code it does not know as fatal and says so in the name", () => {
    assert.deepEqual(kafkaError(4242), { code: 4242, name: "UNKNOWN_KAFKA_ERROR_4242", retriable: false });
  });

  it("agrees with the named constants", () => {
    for (const [name, code] of Object.entries(KafkaErrorCode)) {
      assert.equal(kafkaError(code).name, name);
    }
  });
});

describe("KafkaPartitionError", () => {
  it("carries the code, name and retriability", () => {
    const error = new KafkaPartitionError(5);

    assert.deepEqual([error.kafkaCode, error.message, error.retriable], [5, "LEADER_NOT_AVAILABLE", true]);
  });
});
