/**
 * The lease rules of lib/core/run/lease-coordinator.ts played against the real DynamoDB lease store
 * (DynamoDB Local): fair share, handoffs and failover decided by conditional writes, not by a fake.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { countByOwner, LeaseFleet } from "../../helpers/lease-fleet.js";

const DURATION = 10_000;

describe("lease balance against DynamoDB Local", () => {
  const db = useDynamoDbLocal();

  async function fleet(workers: string[]): Promise<LeaseFleet> {
    const tableName = await db.freshLeaseTable();
    return LeaseFleet.over(new DynamoDbLeaseStore({ client: db.client, tableName }), 24, workers, DURATION);
  }

  it("3 workers over 24 partitions settle at 8 each and stop moving leases", async () => {
    const f = await fleet(["A", "B", "C"]);

    for (let i = 0; i < 30; i++) await f.round();
    assert.deepEqual(await f.counts(), [8, 8, 8]);

    const claims = f.claims;
    for (let i = 0; i < 5; i++) await f.round();
    assert.deepEqual(await f.counts(), [8, 8, 8]);
    assert.equal(f.claims, claims, "a balanced fleet must not move leases");
  });

  it("a worker that dies has its partitions picked up by the others after expiry", async () => {
    const f = await fleet(["A", "B", "C"]);
    for (let i = 0; i < 30; i++) await f.round();
    assert.deepEqual(await f.counts(), [8, 8, 8]);
    const before = (await f.store.list()).filter((l) => l.owner === "C");

    f.dead.add("C");
    await f.round();
    assert.equal(countByOwner(await f.store.list(), f.now).get("C"), 8, "nobody takes a live lease");
    for (let i = 0; i < 12; i++) await f.round();

    const leases = await f.store.list();
    const byOwner = countByOwner(leases, f.now);
    assert.equal(byOwner.get("C"), undefined);
    assert.deepEqual([byOwner.get("A"), byOwner.get("B")], [12, 12]);
    // Every takeover went through a claim that bumped the fencing counter past C's.
    for (const old of before) {
      const now = leases.find((l) => l.partition === old.partition);
      assert.ok(now !== undefined && now.counter > old.counter);
    }
  });
});
