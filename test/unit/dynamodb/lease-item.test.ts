import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { freeLeaseItem, type Item, leaseFromItem, readLeaseItem } from "../../../lib/dynamodb/lease-item.js";
import { isReplicatorError } from "../../../lib/errors.js";

function heldItem(): Item {
  return {
    leaseKey: { S: "orders.v1:12" },
    topic: { S: "orders.v1" },
    partition: { N: "12" },
    owner: { S: "worker-a" },
    counter: { N: "3" },
    expiresAt: { N: "1700000060000" },
    checkpoint: { N: "9007199254740991" },
    lastProgressAt: { N: "1700000000000" },
    updatedAt: { N: "1700000000000" },
  };
}

function invalidAttribute(item: Item): unknown {
  try {
    leaseFromItem(item);
  } catch (error) {
    assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"), String(error));
    return error.details.attribute;
  }
  assert.fail("expected LEASE_STORE_INVALID");
}

describe("leaseFromItem", () => {
  it("reads a held lease with a checkpoint at the largest safe offset", () => {
    assert.deepEqual(leaseFromItem(heldItem()), {
      topic: "orders.v1",
      partition: 12,
      owner: "worker-a",
      counter: 3,
      expiresAt: 1700000060000,
      checkpoint: 9007199254740991,
      lastProgressAt: 1700000000000,
      handoffTo: null,
      targetOffset: null,
      sourceTopicId: null,
      sourceEpoch: null,
    });
  });

  it("reads the item ensure writes as a free lease without checkpoint", () => {
    const lease = leaseFromItem(freeLeaseItem({ topic: "t", partition: 0 }, 5));

    assert.deepEqual(lease, {
      topic: "t",
      partition: 0,
      owner: null,
      counter: 0,
      expiresAt: 0,
      checkpoint: null,
      lastProgressAt: null,
      handoffTo: null,
      targetOffset: null,
      sourceTopicId: null,
      sourceEpoch: null,
    });
  });

  it("reads the target position stored with a checkpoint", () => {
    const item = { ...heldItem(), targetOffset: { N: "4711" } };

    assert.equal(leaseFromItem(item).targetOffset, 4711);
  });

  it("reads the source topic id and leader epoch stored with a checkpoint", () => {
    const checkpoint = heldItem().checkpoint;
    assert.ok(checkpoint !== undefined);
    const item = {
      ...heldItem(),
      sourceTopicId: { S: "ab".repeat(16) },
      sourceEpoch: { N: "7" },
      sourceEpochAt: checkpoint,
    };

    const lease = leaseFromItem(item);

    assert.equal(lease.sourceTopicId, "ab".repeat(16));
    assert.equal(lease.sourceEpoch, 7);
  });

  it("an epoch stored with another checkpoint counts as unknown (an older version moved the checkpoint)", () => {
    const item = {
      ...heldItem(),
      checkpoint: { N: "200" },
      sourceEpoch: { N: "7" },
      sourceEpochAt: { N: "100" },
    };
    assert.equal(leaseFromItem(item).sourceEpoch, null);
    const { sourceEpochAt: _at, ...without } = item;
    assert.equal(leaseFromItem(without).sourceEpoch, null);
  });

  const cases: [string, (item: Item) => void, string][] = [
    ["negative sourceEpoch", (i) => (i.sourceEpoch = { N: "-1" }), "sourceEpoch"],
    ["empty sourceTopicId", (i) => (i.sourceTopicId = { S: "" }), "sourceTopicId"],
    ["negative targetOffset", (i) => (i.targetOffset = { N: "-1" }), "targetOffset"],
    ["missing counter", (i) => delete i.counter, "counter"],
    ["counter stored as a string", (i) => (i.counter = { S: "3" }), "counter"],
    ["negative expiresAt", (i) => (i.expiresAt = { N: "-1" }), "expiresAt"],
    ["fractional checkpoint", (i) => (i.checkpoint = { N: "1.5" }), "checkpoint"],
    ["checkpoint beyond 2^53", (i) => (i.checkpoint = { N: "9007199254740993" }), "checkpoint"],
    ["empty owner", (i) => (i.owner = { S: "" }), "owner"],
    ["numeric owner", (i) => (i.owner = { N: "1" }), "owner"],
    ["missing topic", (i) => delete i.topic, "topic"],
    ["missing partition", (i) => delete i.partition, "partition"],
    ["key not matching topic and partition", (i) => (i.leaseKey = { S: "orders.v1:13" }), "leaseKey"],
    ["numeric key", (i) => (i.leaseKey = { N: "1" }), "leaseKey"],
  ];
  for (const [name, corrupt, attribute] of cases) {
    it(`rejects ${name} naming the attribute`, () => {
      const item = heldItem();
      corrupt(item);

      assert.equal(invalidAttribute(item), attribute);
    });
  }

  it("names the lease key in the error", () => {
    const item = heldItem();
    delete item.expiresAt;

    assert.throws(
      () => leaseFromItem(item),
      (error: unknown) => {
        assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"));
        assert.equal(error.details.leaseKey, "orders.v1:12");
        assert.match(error.message, /orders\.v1:12.*"expiresAt" is missing/);
        return true;
      },
    );
  });
});

describe("readLeaseItem", () => {
  it("reads a lease, and names the key and attribute of an item it cannot read without throwing", () => {
    assert.equal("lease" in readLeaseItem(heldItem()), true);
    assert.deepEqual(readLeaseItem({ ...heldItem(), counter: { S: "3" } }), {
      unreadable: { leaseKey: "orders.v1:12", attribute: "counter" },
    });
    assert.deepEqual(readLeaseItem({ email: { S: "someone@example.com" } }), {
      unreadable: { leaseKey: "(missing key)", attribute: "leaseKey" },
    });
  });
});
