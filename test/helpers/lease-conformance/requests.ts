/**
 * What each store operation costs in requests to the backend (DynamoDB bills per request, and the
 * scale run's figures assume these counts), and that a bad argument costs none.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../lib/errors.js";
import {
  type ConformanceBackend,
  claimed,
  ensureOne,
  type Fixture,
  fixture,
  MINUTE,
  type PortCalls,
} from "./backend.js";

type Counts = Partial<PortCalls>;

/** Port calls and backend requests `run` made; they must agree (one port call, one request). */
async function cost(f: Fixture, backend: ConformanceBackend, run: () => Promise<unknown>): Promise<Counts> {
  const before = { ...f.calls };
  const requests = backend.requests();
  await run();
  const made: Counts = {};
  for (const [method, n] of Object.entries(f.calls) as [keyof PortCalls, number][])
    if (n > before[method]) made[method] = n - before[method];
  const calls = Object.values(made).reduce((sum, n) => sum + n, 0);
  assert.equal(backend.requests() - requests, calls, "one backend request per port call");
  return made;
}

export function requestCases(backend: ConformanceBackend): void {
  describe("requests per operation", () => {
    it("each operation is one request, ensure one read per 100 keys and a put per missing lease", async () => {
      const f = await fixture(backend);
      const { store } = f;
      const now = Date.now();
      const partitions = Array.from({ length: 150 }, (_, partition) => ({ topic: "t", partition }));
      const beat = {
        workerId: "w",
        slot: "w",
        startedAt: now,
        draining: false,
        deadline: now,
        expiresAt: now,
      };

      assert.deepEqual(await cost(f, backend, () => store.ensure(partitions)), { existing: 2, put: 150 });
      assert.deepEqual(await cost(f, backend, () => store.ensure(partitions)), { existing: 2 });
      const free = await ensureOne(store, "t", 0);
      assert.deepEqual(await cost(f, backend, () => store.lease(free)), { get: 1 });
      const held = await claimed(store, free, "a", now + MINUTE);
      assert.deepEqual(await cost(f, backend, () => store.claim(free, "b", now)), { update: 1 });
      assert.deepEqual(await cost(f, backend, () => store.renew(held, now + MINUTE)), { update: 1 });
      const at10 = await store.checkpoint(held, 10, now, 5);
      assert.deepEqual(await cost(f, backend, () => store.checkpoint(at10, 20, now, 6)), { update: 1 });
      assert.deepEqual(await cost(f, backend, () => store.requestHandoff(held, "b")), { update: 1 });
      const asked = { ...held, handoffTo: "b" };
      assert.deepEqual(await cost(f, backend, () => store.withdrawHandoff(asked, "b")), { update: 1 });
      assert.deepEqual(await cost(f, backend, () => store.release(held)), { update: 1 });
      assert.deepEqual(await cost(f, backend, () => store.heartbeat(beat)), { update: 1 });
      assert.deepEqual(await cost(f, backend, () => store.assign("w", ["t:0"])), { update: 1 });
      assert.deepEqual(await cost(f, backend, () => store.worker("w")), { get: 1 });
      assert.deepEqual(await cost(f, backend, () => store.claimLeader(null, "w", now)), { update: 1 });
      assert.deepEqual(await cost(f, backend, () => store.leader()), { get: 1 });
      assert.deepEqual(await cost(f, backend, () => store.removeWorker({ ...beat, assignment: null })), {
        delete: 1,
      });
    });

    it("a bad argument is refused before anything reaches the table", async () => {
      const f = await fixture(backend);
      const held = await claimed(f.store, await ensureOne(f.store), "a", Date.now() + MINUTE);
      const checks: [string, () => Promise<unknown>][] = [
        ["claim", () => f.store.claim(held, "", 1)],
        ["renew", () => f.store.renew(held, -1)],
        ["checkpoint", () => f.store.checkpoint(held, 1.5, 1)],
        [
          "resetCheckpoint",
          () =>
            f.store.resetCheckpoint(held, 0, 1, "topic-recreated", {
              targetOffset: null,
              source: { topicId: null, leaderEpoch: null },
            }),
        ],
        ["requestHandoff", () => f.store.requestHandoff(held, "a")],
        ["withdrawHandoff", () => f.store.withdrawHandoff({ ...held, handoffTo: "" }, "")],
        ["handOver", () => f.store.handOver({ ...held, handoffTo: "b" }, Number.NaN)],
        [
          "heartbeat",
          () =>
            f.store.heartbeat({
              workerId: "",
              slot: "s",
              startedAt: 0,
              draining: false,
              deadline: 0,
              expiresAt: 0,
            }),
        ],
        ["assign", () => f.store.assign("", [])],
        ["worker", () => f.store.worker("")],
        ["claimLeader", () => f.store.claimLeader(null, "w", -1)],
      ];
      for (const [operation, call] of checks) {
        const made = await cost(f, backend, () =>
          assert.rejects(call(), (error: unknown) => {
            assert.ok(isReplicatorError(error, "CONFIG_INVALID"), `${operation}: ${String(error)}`);
            assert.equal(error.details.operation, operation);
            return true;
          }),
        );
        assert.deepEqual(made, {}, operation);
      }
    });
  });
}
