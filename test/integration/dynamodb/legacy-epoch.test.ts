/**
 * The source epoch in DynamoDB's item layout, beside older versions of this code: their
 * `sourceLeaderEpoch` is never read and goes with the next checkpoint, and an epoch they left
 * behind a checkpoint they moved counts for nothing. What a checkpoint's source position and a
 * reset do is in the conformance suite (conformance.test.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GetItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import type { Lease } from "../../../lib/core/ports.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";

const tp = { topic: "orders", partition: 0 };
const source = { topicId: "0f3c5a9e2b7d4e61a8c9d0e1f2a3b4c5", leaderEpoch: 4 };

describe("DynamoDbLeaseStore source epochs beside older versions, against DynamoDB Local", () => {
  const db = useDynamoDbLocal();

  /** A fresh table with `tp` held by w1 at checkpoint 500 (target position 900, `source`). */
  async function heldAt500(): Promise<{
    store: DynamoDbLeaseStore;
    held: Lease;
    now: number;
    tableName: string;
  }> {
    const tableName = await db.freshLeaseTable();
    const store = new DynamoDbLeaseStore({ client: db.client, tableName });
    await store.ensure([tp]);
    const [free] = await store.list();
    assert.ok(free);
    const now = Date.now();
    const claimed = await store.claim(free, "w1", now + 60_000);
    assert.ok(claimed);
    const held = await store.checkpoint(claimed, 500, now, 900, source);
    return { store, held, now, tableName };
  }

  it("ignores and removes the epoch attribute of older versions, which could be stale", async () => {
    // Prepare: an item as an older version left it, its epoch under the old attribute name.
    const { store, held, now, tableName } = await heldAt500();
    const key = { leaseKey: { S: "orders:0" } };
    await db.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: "SET sourceLeaderEpoch = :e REMOVE sourceEpoch",
        ExpressionAttributeValues: { ":e": { N: "1" } },
      }),
    );
    const [old] = await store.list();
    assert.equal(old?.sourceEpoch, null);

    // Act
    await store.checkpoint({ ...held, sourceEpoch: null }, 700, now, 990, source);

    // Assess
    const item = await db.client.send(new GetItemCommand({ TableName: tableName, Key: key }));
    assert.equal(item.Item?.sourceLeaderEpoch, undefined);
    assert.deepEqual(item.Item?.sourceEpoch, { N: "4" });
    assert.deepEqual(item.Item?.sourceEpochAt, { N: "700" });
  });

  it("an epoch counts only with the checkpoint it was stored with (an older version moved it)", async () => {
    // Prepare: checkpoint 500 with epoch 4; an older version moves the checkpoint to 800 the
    // way it writes (sourceLeaderEpoch, never sourceEpoch).
    const { store, tableName } = await heldAt500();
    await db.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { leaseKey: { S: "orders:0" } },
        UpdateExpression: "SET #c = :c, sourceLeaderEpoch = :e",
        ExpressionAttributeNames: { "#c": "checkpoint" },
        ExpressionAttributeValues: { ":c": { N: "800" }, ":e": { N: "5" } },
      }),
    );

    // Act
    const [moved] = await store.list();

    // Assess: epoch 4 describes the records from 500 on, not from 800: unknown.
    assert.equal(moved?.checkpoint, 800);
    assert.equal(moved?.sourceEpoch, null);
  });
});
