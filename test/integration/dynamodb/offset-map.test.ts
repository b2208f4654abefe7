/**
 * The lease's offset map against DynamoDB Local: each checkpoint with a target position adds its
 * pair in the same conditional write (the first one marked as the origin), thinned to 32 points;
 * a checkpoint reset starts the map again from the reset's position.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OFFSET_MAP_MAX_POINTS } from "../../../lib/core/lease/offset-map.js";
import type { Lease } from "../../../lib/core/ports.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";

const tp = { topic: "orders", partition: 0 };

describe("DynamoDbLeaseStore offset map against DynamoDB Local", () => {
  const db = useDynamoDbLocal();

  async function claimed(): Promise<{ store: DynamoDbLeaseStore; held: Lease; now: number }> {
    const tableName = await db.freshLeaseTable();
    const store = new DynamoDbLeaseStore({ client: db.client, tableName });
    await store.ensure([tp]);
    const [free] = await store.list();
    assert.ok(free);
    const now = Date.now();
    const held = await store.claim(free, "w1", now + 60_000);
    assert.ok(held);
    return { store, held, now };
  }

  it("adds each checkpoint's pair, the pin as the origin, and reads it back from the table", async () => {
    const { store, held, now } = await claimed();
    let lease = await store.checkpoint(held, 0, now, 7); // the pin: nothing copied yet
    lease = await store.checkpoint(lease, 100, now, 108);
    lease = await store.checkpoint(lease, 100, now, 110); // stays put, a later position
    lease = await store.checkpoint(lease, 250, now); // no position: the map is left alone
    assert.deepEqual(lease.offsetMap, [
      { source: 0, target: 7, origin: true },
      { source: 100, target: 110 },
    ]);
    const [listed] = await store.list();
    assert.deepEqual(listed?.offsetMap, lease.offsetMap);
  });

  it("keeps at most 32 points over many checkpoints, the origin among them", async () => {
    const { store, held, now } = await claimed();
    let lease = await store.checkpoint(held, 0, now, 0);
    for (let c = 1; c <= 80; c++) lease = await store.checkpoint(lease, c * 10, now, c * 12);
    assert.equal(lease.offsetMap?.length, OFFSET_MAP_MAX_POINTS);
    assert.deepEqual(lease.offsetMap?.[0], { source: 0, target: 0, origin: true });
    assert.deepEqual(lease.offsetMap?.at(-1), { source: 800, target: 960 });
  });

  it("a checkpoint reset starts the map again, or removes it without a position", async () => {
    const { store, held, now } = await claimed();
    let lease = await store.checkpoint(held, 0, now, 0);
    lease = await store.checkpoint(lease, 500, now, 900);
    const source = { topicId: "bb".repeat(16), leaderEpoch: null };
    lease = await store.resetCheckpoint(lease, 40, now, "log-truncated", { targetOffset: 950, source });
    assert.deepEqual(lease.offsetMap, [{ source: 40, target: 950 }]);
    lease = await store.resetCheckpoint(lease, 0, now, "topic-recreated", { targetOffset: null, source });
    assert.equal(lease.offsetMap, undefined);
  });
});
