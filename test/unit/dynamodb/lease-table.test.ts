import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { partitionKey } from "../../../lib/core/model.js";
import { leaseTableProblems } from "../../../lib/dynamodb/lease-table.js";

describe("leaseKey", () => {
  it("joins topic and partition with a colon, which Kafka topic names cannot contain", () => {
    assert.equal(partitionKey({ topic: "my.topic_v-2", partition: 17 }), "my.topic_v-2:17");
  });
});

describe("leaseTableProblems", () => {
  it("accepts a string partition key named leaseKey", () => {
    const problems = leaseTableProblems({
      KeySchema: [{ AttributeName: "leaseKey", KeyType: "HASH" }],
      AttributeDefinitions: [{ AttributeName: "leaseKey", AttributeType: "S" }],
    });

    assert.deepEqual(problems, []);
  });

  it("lists every problem of a table keyed differently", () => {
    const problems = leaseTableProblems({
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "sk", AttributeType: "S" },
      ],
    });

    assert.deepEqual(problems, [
      'partition key must be "leaseKey", found "pk"',
      'must have no sort key, found "sk"',
    ]);
  });

  it("rejects a numeric leaseKey", () => {
    const problems = leaseTableProblems({
      KeySchema: [{ AttributeName: "leaseKey", KeyType: "HASH" }],
      AttributeDefinitions: [{ AttributeName: "leaseKey", AttributeType: "N" }],
    });

    assert.deepEqual(problems, ['"leaseKey" must be a string (S), found N']);
  });
});
