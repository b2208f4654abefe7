import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../../lib/errors.js";
import {
  MAX_TRANSACTIONAL_ID_BYTES,
  TRANSACTIONAL_ID_PREFIX,
  transactionalIdFor,
} from "../../../../lib/kafka/produce/transactional-id.js";

function refusal(pattern: RegExp) {
  return (error: unknown) => isReplicatorError(error, "CONFIG_INVALID") && pattern.test(error.message);
}

describe("transactionalIdFor", () => {
  it("names the alias, topic and partition under kafka-mirror's prefix", () => {
    assert.equal(TRANSACTIONAL_ID_PREFIX, "kafka-mirror.");
    assert.equal(transactionalIdFor("us-east", "orders.v2", 7), "kafka-mirror.us-east/orders.v2/7");
  });

  it("gives partitions of different topics and aliases different ids even when the names hold dots", () => {
    // alias "a.b" + topic "c" and alias "a" + topic "b.c" would both be "a.b.c" with dots between.
    assert.notEqual(transactionalIdFor("a.b", "c", 0), transactionalIdFor("a", "b.c", 0));
    assert.notEqual(transactionalIdFor("a", "b", 10), transactionalIdFor("a", "b.1", 0));
    assert.notEqual(transactionalIdFor("a", "t", 1), transactionalIdFor("a", "t", 2));
  });

  it("stays far below Kafka's 32767-byte limit for the longest legal alias and topic", () => {
    const id = transactionalIdFor("a".repeat(100), "t".repeat(249), 2 ** 31 - 1);
    assert.equal(Buffer.byteLength(id), 374);
    assert.ok(Buffer.byteLength(id) < MAX_TRANSACTIONAL_ID_BYTES);
  });

  it("refuses a partition, topic or alias no Kafka partition can have, naming the value", () => {
    assert.throws(() => transactionalIdFor("src", "t", -1), refusal(/partition -1 is not an integer/));
    assert.throws(() => transactionalIdFor("src", "t", 1.5), refusal(/partition 1.5/));
    assert.throws(
      () => transactionalIdFor("src", "a/b", 0),
      refusal(/topic "a\/b" is not a Kafka topic name/),
    );
    assert.throws(() => transactionalIdFor("src", "t".repeat(250), 0), refusal(/1\.\.249 chars/));
    assert.throws(() => transactionalIdFor("", "t", 0), refusal(/alias "" is not/));
    assert.throws(() => transactionalIdFor("x/y", "t", 0), refusal(/alias "x\/y"/));
  });

  it("lists every problem at once", () => {
    assert.throws(
      () => transactionalIdFor("", "", -1),
      (error: unknown) =>
        isReplicatorError(error, "CONFIG_INVALID") &&
        Array.isArray(error.details.problems) &&
        error.details.problems.length === 3,
    );
  });

  it("refuses an id longer than Kafka's string limit", () => {
    assert.throws(() => transactionalIdFor("a".repeat(40_000), "t", 0), refusal(/Kafka allows 32767/));
  });
});
