/**
 * The leader's pure assignment (lib/core/run/lease-assignment.ts): balance, stickiness, the cap on
 * changes, draining and slot preference, plus a property over random fleets.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { Lease, WorkerRecord } from "../../../../lib/core/ports.js";
import { type AssignmentInput, assignPartitions } from "../../../../lib/core/run/lease-assignment.js";

const NOW = 1_000_000;

function worker(id: string, fields: Partial<WorkerRecord> = {}): WorkerRecord {
  return {
    workerId: id,
    slot: id,
    startedAt: NOW - 10_000,
    draining: false,
    deadline: NOW + 600_000,
    expiresAt: NOW + 3_000,
    assignment: null,
    ...fields,
  };
}

function keys(n: number): string[] {
  return Array.from({ length: n }, (_, p) => `t:${p}`);
}

function held(owners: Record<string, string>): Map<string, Lease> {
  return new Map(
    Object.entries(owners).map(([key, owner]) => {
      const partition = Number(key.split(":")[1]);
      const lease: Lease = {
        topic: "t",
        partition,
        owner,
        counter: 1,
        expiresAt: NOW + 10_000,
        checkpoint: null,
        lastProgressAt: null,
        handoffTo: null,
      };
      return [key, lease];
    }),
  );
}

function plan(input: Partial<AssignmentInput> & Pick<AssignmentInput, "workers">) {
  return assignPartitions({
    partitions: keys(12),
    leases: new Map(),
    now: NOW,
    maxChanges: 1_000,
    drainLeadMs: 5_000,
    ...input,
  });
}

function sizes(p: ReturnType<typeof plan>, ids: readonly string[]): number[] {
  return ids.map((id) => p.assignments.get(id)?.length ?? 0);
}

describe("assignPartitions", () => {
  it("balances free partitions over live workers and ignores dead ones", () => {
    const p = plan({ workers: [worker("A"), worker("B"), worker("C"), worker("D", { expiresAt: NOW })] });
    assert.deepEqual(sizes(p, ["A", "B", "C"]), [4, 4, 4]);
    assert.equal(p.assignments.has("D"), false);
  });

  it("is sticky: a balanced assignment stays exactly as it is", () => {
    const first = plan({ workers: [worker("A"), worker("B"), worker("C")], partitions: keys(13) });
    const again = plan({
      partitions: keys(13),
      workers: ["A", "B", "C"].map((id) => worker(id, { assignment: first.assignments.get(id) ?? [] })),
    });
    assert.equal(again.changes, 0);
    assert.deepEqual(again.assignments, first.assignments);
  });

  it("moves as few partitions as a newcomer needs, and keeps what each worker holds", () => {
    const a = keys(12);
    const p = plan({
      workers: [worker("A", { assignment: a }), worker("N")],
      leases: held(Object.fromEntries(a.map((k) => [k, "A"]))),
    });
    assert.deepEqual(sizes(p, ["A", "N"]), [6, 6]);
    assert.equal(p.changes, 6);
  });

  it("changes at most maxChanges assignments a round, free partitions first", () => {
    const p = plan({
      workers: [worker("A", { assignment: keys(6) }), worker("B")],
      partitions: keys(12),
      maxChanges: 4,
    });
    assert.equal(p.changes, 4);
    assert.equal(p.deferred, 2);
    assert.deepEqual(sizes(p, ["A", "B"]), [6, 4], "the free ones went first; nothing moved off A");
  });

  it("gives a draining worker's partitions to a newer worker of its slot first", () => {
    const old = worker("run-1", { slot: "3", draining: true, assignment: keys(6) });
    const next = worker("run-2", { slot: "3", startedAt: NOW - 1_000 });
    const other = worker("B", { assignment: keys(12).slice(6) });
    const p = plan({ workers: [old, next, other] });
    assert.deepEqual(p.assignments.get("run-2"), keys(6));
    assert.deepEqual(p.assignments.get("run-1"), []);
  });

  it("keeps a draining worker's partitions with it until shortly before its deadline if no successor came", () => {
    const draining = worker("D", { draining: true, assignment: keys(6), deadline: NOW + 60_000 });
    const other = worker("B", { assignment: keys(12).slice(6) });
    const early = plan({ workers: [draining, other] });
    assert.deepEqual(early.assignments.get("D"), keys(6));
    assert.deepEqual(sizes(early, ["B"]), [6]);

    const late = plan({ workers: [{ ...draining, deadline: NOW + 4_000 }, other] });
    assert.deepEqual(late.assignments.get("D"), []);
    assert.deepEqual(sizes(late, ["B"]), [12]);
  });

  it("gives a dead worker's partitions back to the live worker of its slot", () => {
    const dead = worker("run-1", { slot: "7", expiresAt: NOW - 1, assignment: keys(4) });
    const next = worker("run-2", { slot: "7" });
    const others = [
      worker("A", { assignment: keys(12).slice(4, 8) }),
      worker("B", { assignment: keys(12).slice(8) }),
    ];
    const p = plan({ workers: [dead, next, ...others] });
    assert.deepEqual(p.assignments.get("run-2"), keys(4));
  });

  it("leaves a partition with its live holder rather than the worker it was assigned to, unless that worker asked for it", () => {
    // A froze past its lease and B claimed t:0; A is back, its item still lists t:0.
    const a = worker("A", { assignment: ["t:0"] });
    const b = worker("B", { assignment: [] });
    const leases = held({ "t:0": "B" });
    const kept = plan({ workers: [a, b], partitions: ["t:0"], leases });
    assert.deepEqual(kept.assignments.get("B"), ["t:0"]);
    assert.deepEqual(kept.assignments.get("A"), []);

    // A move under way: the leader moved t:0 to A and asked B for it; it stays A's.
    const asked = new Map([...leases].map(([k, l]) => [k, { ...l, handoffTo: "A" }]));
    const moving = plan({ workers: [a, b], partitions: ["t:0"], leases: asked });
    assert.deepEqual(moving.assignments.get("A"), ["t:0"]);
    assert.equal(moving.changes, 0);
  });

  it("gives a partition in a worker's backoff to another worker, over its quota if need be, and back once the backoff is over", () => {
    // A failed t:0 and released it; both are at their quota of 6.
    const backoff = new Map([["t:0", NOW + 10_000]]);
    const a = worker("A", { assignment: keys(6), backoff, expiresAt: NOW + 20_000 });
    const b = worker("B", { assignment: keys(12).slice(6), expiresAt: NOW + 20_000 });
    const moved = plan({ workers: [a, b] });
    assert.deepEqual(moved.assignments.get("A"), keys(6).slice(1));
    assert.deepEqual(moved.assignments.get("B"), ["t:0", ...keys(12).slice(6)].sort());

    // Its backoff over, A may have it again (here, as B has not taken it yet, it stays A's).
    const later = plan({ workers: [a, b], now: NOW + 10_000 });
    assert.deepEqual(later.assignments.get("A"), keys(6));
  });

  it("assigns a partition to nobody while every live worker has it in its backoff", () => {
    const backoff = new Map([["t:3", NOW + 10_000]]);
    const p = plan({ workers: [worker("A", { assignment: keys(12), backoff })] });
    assert.deepEqual(
      p.assignments.get("A"),
      keys(12)
        .filter((k) => k !== "t:3")
        .sort(),
    );
  });

  it("does not give a partition in its backoff to a newer run of its slot, nor pin it to a draining run that failed it", () => {
    const backoff = new Map([["t:0", NOW + 10_000]]);
    const old = worker("run-1", { slot: "3", draining: true, assignment: ["t:0", "t:1"] });
    const next = worker("run-2", { slot: "3", startedAt: NOW - 1_000, backoff });
    const other = worker("B", { assignment: [] });
    // The newer run failed t:0: the draining run keeps it, as it would with no successor.
    const p = plan({ workers: [old, next, other], partitions: ["t:0", "t:1"] });
    assert.deepEqual(
      ["run-1", "run-2", "B"].map((id) => p.assignments.get(id)),
      [["t:0"], ["t:1"], []],
    );

    // The draining run failed t:0 itself: it goes to anyone else.
    const pinned = plan({ workers: [{ ...old, backoff }, other], partitions: ["t:0", "t:1"] });
    assert.deepEqual([pinned.assignments.get("run-1"), pinned.assignments.get("B")], [["t:1"], ["t:0"]]);
  });

  it("property: max minus min <= 1 over live non-draining workers, each partition once, once the cap allows", () => {
    const fleet = fc.record({
      partitions: fc.integer({ min: 0, max: 200 }),
      workers: fc.array(
        fc.record({
          dead: fc.boolean(),
          draining: fc.boolean(),
          slot: fc.integer({ min: 0, max: 3 }),
          share: fc.nat(50),
        }),
        { minLength: 1, maxLength: 12 },
      ),
    });
    fc.assert(
      fc.property(fleet, ({ partitions, workers }) => {
        const all = keys(partitions);
        let next = 0;
        const records = workers.map((w, i) => {
          const assignment = all.slice(next, Math.min(all.length, next + w.share));
          next += assignment.length;
          return worker(`w${i}`, {
            slot: String(w.slot),
            startedAt: NOW - 10_000 + i,
            draining: w.draining,
            deadline: NOW + 1_000,
            expiresAt: w.dead ? NOW : NOW + 3_000,
            assignment,
          });
        });
        const p = plan({ workers: records, partitions: all });
        const receivers = records.filter((r) => !r.draining && r.expiresAt > NOW).map((r) => r.workerId);
        const seen = [...p.assignments.values()].flat();
        assert.equal(new Set(seen).size, seen.length, "a partition assigned twice");
        if (receivers.length === 0) return;
        assert.equal(seen.length, partitions, "every partition assigned");
        const counts = receivers.map((id) => p.assignments.get(id)?.length ?? 0);
        assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `unbalanced: ${counts}`);
      }),
      { numRuns: 300 },
    );
  });
});
