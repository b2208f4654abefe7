/**
 * Regression: one item in the lease table that is not a lease this version can read (another
 * app's, a hand edit, a mismatched key) made `list()` throw LEASE_STORE_INVALID, so every
 * rebalance of every worker failed and the whole fleet stopped. Against DynamoDB Local.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PutItemCommand, ScanCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import type { Item } from "../../../lib/dynamodb/lease-item.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { CapturingLogger, CapturingMetrics } from "../../helpers/fake-observability.js";
import { LeaseFleet } from "../../helpers/lease-fleet.js";

const DURATION = 10_000;

/** Foreign items, each with a value that must never reach a log line. */
const FOREIGN: readonly { readonly item: Item; readonly attribute: string }[] = [
  // Wrong types: a partition stored as a string, a counter as a string.
  {
    item: {
      leaseKey: { S: "t:90" },
      topic: { S: "t" },
      partition: { S: "ninety" },
      counter: { S: "secret-counter" },
    },
    attribute: "partition",
  },
  // Missing attributes: only the key.
  { item: { leaseKey: { S: "t:91" } }, attribute: "topic" },
  // A key that does not match its topic and partition.
  {
    item: {
      leaseKey: { S: "t:92" },
      topic: { S: "secret-topic" },
      partition: { N: "7" },
      counter: { N: "0" },
      expiresAt: { N: "0" },
    },
    attribute: "leaseKey",
  },
  // Another app's item sharing the table.
  {
    item: { leaseKey: { S: "session#4711" }, email: { S: "secret@example.com" }, ttl: { N: "1" } },
    attribute: "topic",
  },
];

describe("lease table items that are not leases", () => {
  const db = useDynamoDbLocal();

  it("leave the fleet claiming every partition, each skipped item logged and counted", async () => {
    // Prepare
    const tableName = await db.freshLeaseTable();
    const logger = new CapturingLogger();
    const metrics = new CapturingMetrics();
    const store = new DynamoDbLeaseStore({ client: db.client, tableName, logger, metrics });
    for (const { item } of FOREIGN) {
      await db.client.send(new PutItemCommand({ TableName: tableName, Item: item }));
    }
    const fleet = await LeaseFleet.over(store, 6, ["A", "B"], DURATION);

    // Act
    for (let i = 0; i < 10; i++) await fleet.round();

    // Assess
    assert.deepEqual(await fleet.counts(), [3, 3]);
    const reported = new Set(metrics.skipped.map((s) => `${s.leaseKey}/${s.attribute}`));
    assert.deepEqual([...reported].sort(), FOREIGN.map((f) => `${f.item.leaseKey?.S}/${f.attribute}`).sort());
    // Counted on every scan, warned about once per item.
    assert.ok(metrics.skipped.length > FOREIGN.length, "every scan counts");
    const warnings = logger.at("warn");
    assert.deepEqual(
      warnings.map((w) => `${w.fields.leaseKey}/${w.fields.attribute}`).sort(),
      [...reported].sort(),
    );
    for (const w of warnings) {
      assert.match(w.message, /lease table item skipped/);
      assert.equal(w.fields.tableName, tableName);
    }
    // Key and attribute only: no other value of the item is ever logged.
    assert.doesNotMatch(JSON.stringify(logger.entries), /secret/);
    // The foreign items are left exactly as they were, never overwritten.
    const raw = await db.client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
    const foreignNow = (raw.Items ?? []).filter((i) =>
      FOREIGN.some((f) => f.item.leaseKey?.S === i.leaseKey?.S),
    );
    assert.deepEqual(
      foreignNow.sort((a, b) => String(a.leaseKey?.S).localeCompare(String(b.leaseKey?.S))),
      FOREIGN.map((f) => f.item).sort((a, b) => String(a.leaseKey?.S).localeCompare(String(b.leaseKey?.S))),
    );
  });

  it("an operation on a held lease whose item went bad still fails with LEASE_STORE_INVALID", async () => {
    // Prepare
    const tableName = await db.freshLeaseTable();
    const store = new DynamoDbLeaseStore({ client: db.client, tableName });
    await store.ensure([{ topic: "t", partition: 0 }]);
    const [free] = await store.list();
    assert.ok(free);
    const held = await store.claim(free, "A", Date.now() + DURATION);
    assert.ok(held);
    await db.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { leaseKey: { S: "t:0" } },
        UpdateExpression: "SET #c = :bad",
        ExpressionAttributeNames: { "#c": "checkpoint" },
        ExpressionAttributeValues: { ":bad": { S: "oops" } },
      }),
    );

    // Act + Assess
    await assert.rejects(store.renew(held, Date.now() + 2 * DURATION), (error: unknown) => {
      assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"), String(error));
      assert.deepEqual(error.details, { leaseKey: "t:0", attribute: "checkpoint" });
      return true;
    });
    assert.deepEqual(await store.list(), []);
  });
});
