import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isInternalTopic, topicNameProblem } from "../../../lib/topics/names.js";

describe("topicNameProblem", () => {
  it("accepts a name of exactly 249 legal characters", () => {
    assert.equal(topicNameProblem("a".repeat(249)), null);
    assert.equal(topicNameProblem("Ab.c-d_9"), null);
  });

  it("refuses what Kafka refuses", () => {
    assert.match(topicNameProblem("a".repeat(250)) ?? "", /250 characters long/);
    assert.match(topicNameProblem("a b") ?? "", /characters other than/);
    assert.match(topicNameProblem("a,b") ?? "", /characters other than/);
    assert.match(topicNameProblem("") ?? "", /empty/);
    assert.match(topicNameProblem("..") ?? "", /not allowed/);
  });
});

describe("isInternalTopic", () => {
  it("treats every __ topic as internal and nothing else", () => {
    assert.equal(isInternalTopic("__consumer_offsets"), true);
    assert.equal(isInternalTopic("__transaction_state"), true);
    assert.equal(isInternalTopic("_confluent-metrics"), false);
    assert.equal(isInternalTopic("orders__v2"), false);
  });
});
