/**
 * Every condition the store writes under (lib/core/lease/conditions.ts), from the views a writer
 * may have, on a matrix of stored items (a missing one included): the backend must decide each
 * cell as the condition says (memory-table.ts' `holds`, which reads the condition as DynamoDB
 * documents it), and some cells are pinned by hand so neither side can be wrong the same way.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CoordinationConditions, LeaseConditions } from "../../../lib/core/lease/conditions.js";
import { holds } from "../../../lib/core/lease/memory-table.js";
import { absent, type Condition } from "../../../lib/core/lease/model.js";
import { ChangeSet, type Item } from "../../../lib/core/lease/table.js";
import type { Lease } from "../../../lib/core/ports.js";
import { leaseOf } from "../fake-leases.js";
import type { ConformanceBackend } from "./backend.js";

const TP = { topic: "orders", partition: 3 };
const KEY = "orders:3";

/** Stored items: held by A (with and without a checkpoint or handoff request), free, taken by B. */
const STORED = {
  heldByA: leaseOf(TP, { owner: "a", counter: 5, expiresAt: 1_000, checkpoint: 50, handoffTo: "b" }),
  heldByAFresh: leaseOf(TP, { owner: "a", counter: 5, expiresAt: 1_000 }),
  free: leaseOf(TP, { counter: 5 }),
  takenByB: leaseOf(TP, { owner: "b", counter: 6, expiresAt: 2_000, checkpoint: 70 }),
} satisfies Record<string, Lease>;

function itemOf(lease: Lease): Item {
  return {
    topic: lease.topic,
    partition: lease.partition,
    counter: lease.counter,
    expiresAt: lease.expiresAt,
    updatedAt: 1,
    ...(lease.owner === null ? {} : { owner: lease.owner }),
    ...(lease.checkpoint === null ? {} : { checkpoint: lease.checkpoint }),
    ...(lease.handoffTo === null ? {} : { handoffTo: lease.handoffTo }),
  };
}

/** Every condition the store writes under, from the views a writer may have. */
function conditions(): Record<string, Condition> {
  const a = { owner: "a", counter: 5 };
  const all: Record<string, Condition> = { create: LeaseConditions.create() };
  for (const [name, observed] of Object.entries(STORED))
    all[`claim ${name}`] = LeaseConditions.claim(observed);
  all["claim stale expiry"] = LeaseConditions.claim({ ...STORED.heldByA, expiresAt: 900 });
  all["renew a5"] = LeaseConditions.renew(a);
  all["renew a4"] = LeaseConditions.renew({ owner: "a", counter: 4 });
  all["release a5"] = LeaseConditions.release(a);
  all["release b5"] = LeaseConditions.release({ owner: "b", counter: 5 });
  all["requestHandoff a5"] = LeaseConditions.requestHandoff(a);
  all["handOver a5 to b"] = LeaseConditions.handOver(a, "b");
  all["handOver a5 to c"] = LeaseConditions.handOver(a, "c");
  all["withdrawHandoff a5 by b"] = LeaseConditions.withdrawHandoff(a, "b");
  all["withdrawHandoff a5 by c"] = LeaseConditions.withdrawHandoff(a, "c");
  for (const now of [999, 1_000, 1_001]) {
    for (const [from, next] of [
      [null, 10],
      [50, 50],
      [50, 60],
      [40, 50],
      [40, 60],
      [60, 60],
    ] as const) {
      const held = { ...leaseOf(TP, { expiresAt: 1_000, checkpoint: from }), ...a };
      all[`checkpoint ${from}->${next} at ${now}`] = LeaseConditions.checkpoint(held, next, now);
    }
    for (const from of [40, 50])
      all[`reset from ${from} at ${now}`] = LeaseConditions.resetCheckpoint(a, from, now);
  }
  all["claimLeader absent"] = CoordinationConditions.claimLeader(null);
  all["claimLeader as a5"] = CoordinationConditions.claimLeader({ owner: "a", counter: 5, expiresAt: 1_000 });
  all["claimLeader as free"] = CoordinationConditions.claimLeader({ owner: null, counter: 5, expiresAt: 0 });
  all["removeWorker 1000"] = CoordinationConditions.removeWorker(1_000);
  return all;
}

/** Cells decided by hand from the race each condition is for. */
const PINNED: readonly [condition: string, item: keyof typeof STORED | "missing", accepted: boolean][] = [
  ["create", "missing", true],
  ["create", "free", false],
  ["claim heldByA", "heldByA", true],
  ["claim stale expiry", "heldByA", false],
  ["claim free", "missing", false],
  ["renew a5", "heldByA", true],
  ["renew a4", "heldByA", false],
  ["renew a5", "takenByB", false],
  ["release a5", "free", false],
  ["requestHandoff a5", "heldByA", false],
  ["requestHandoff a5", "heldByAFresh", true],
  ["handOver a5 to b", "heldByA", true],
  ["handOver a5 to c", "heldByA", false],
  ["withdrawHandoff a5 by b", "heldByA", true],
  ["withdrawHandoff a5 by c", "heldByA", false],
  ["withdrawHandoff a5 by b", "heldByAFresh", false],
  ["withdrawHandoff a5 by b", "takenByB", false],
  ["checkpoint null->10 at 999", "heldByAFresh", true],
  ["checkpoint null->10 at 1000", "heldByAFresh", false],
  ["checkpoint 50->50 at 999", "heldByA", true],
  ["checkpoint 40->60 at 999", "heldByA", true],
  ["checkpoint 40->50 at 999", "heldByA", false],
  ["checkpoint 60->60 at 999", "heldByA", false],
  ["reset from 50 at 999", "heldByA", true],
  ["reset from 40 at 999", "heldByA", false],
  ["claimLeader absent", "missing", true],
  ["claimLeader as a5", "heldByAFresh", true],
  ["claimLeader as free", "free", true],
  ["removeWorker 1000", "heldByA", true],
  ["removeWorker 1000", "missing", false],
];

export function conditionCases(backend: ConformanceBackend): void {
  describe("conditions", () => {
    it("decides every condition on every stored item as the condition says", async () => {
      const table = await backend.table();
      const decided = new Map<string, boolean>();
      const disagreements: string[] = [];
      for (const [itemName, stored] of [...Object.entries(STORED), ["missing", undefined] as const]) {
        const item = stored === undefined ? undefined : itemOf(stored);
        for (const [conditionName, condition] of Object.entries(conditions())) {
          // A lease item has no workerId, so this deletes whatever is there.
          if (item === undefined)
            await table.delete(KEY, { operation: "test", condition: absent("workerId") });
          else await table.put(KEY, item, { operation: "test" });
          const changes = new ChangeSet().with("updatedAt", 2);
          const accepted = (await table.update(KEY, changes, { operation: "test", condition })).ok;
          decided.set(`${conditionName} on ${itemName}`, accepted);
          if (accepted !== holds(condition, item)) {
            disagreements.push(
              `${conditionName} on ${itemName}: backend ${accepted}, condition ${!accepted}`,
            );
          }
        }
      }

      assert.deepEqual(disagreements, []);
      assert.deepEqual(
        PINNED.map(([c, i]) => [c, i, decided.get(`${c} on ${i}`)]),
        PINNED.map(([c, i, accepted]) => [c, i, accepted]),
      );
      // The matrix is worth something only if it has both answers in it.
      const accepted = [...decided.values()].filter(Boolean).length;
      assert.ok(accepted > 10 && decided.size - accepted > 10, `${accepted} of ${decided.size} accepted`);
    });
  });
}
