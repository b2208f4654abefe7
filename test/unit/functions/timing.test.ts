/**
 * Overlapping scheduled runs (issue 13): the function passes its slot and a drain time derived
 * from the tick's scheduled start, gives each run a worker id of its own, and the timeout
 * arithmetic leaves the handoff window inside Lambda's 15 minutes.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Context } from "aws-lambda";
import { type ReplicationRunner, replicate, tickMs } from "../../../functions/replicate.js";
import {
  DRAIN_DELAY_MS,
  drainAtFor,
  HANDOFF_WINDOW_MS,
  OVERLAPPING_TICK_MINUTES,
  RUN_OVERLAP_MS,
  RUN_SAFETY_MARGIN_MS,
  replicateTimeoutSeconds,
  scheduleInput,
  WRITE_STOP_MS,
} from "../../../functions/timing.js";
import type { RunSummary } from "../../../lib/core/run/run-summary.js";
import type { ReplicateOptions } from "../../../lib/core/run/worker.js";

interface Call {
  readonly workerId: string;
  readonly slot: string;
  readonly deadline: number;
  readonly options: ReplicateOptions | undefined;
}

function runner(calls: Call[]): ReplicationRunner {
  return {
    workerId: "container-1",
    workerFor: ({ workerId, slot }) => ({
      async replicate(deadline: number, options?: ReplicateOptions): Promise<RunSummary> {
        calls.push({ workerId, slot, deadline, options });
        return {
          workerId,
          startedAt: 0,
          endedAt: 1,
          endReason: "deadline",
          partitions: [],
          errors: [],
          caughtUp: false,
          emptySelection: null,
        };
      },
    }),
  };
}

function context(remainingMs: number): Context {
  return { getRemainingTimeInMillis: () => remainingMs } as unknown as Context;
}

describe("replicate: overlapping scheduled runs", () => {
  it("drains at the tick's scheduled start + tick + the drain delay, with the slot of its rule", async () => {
    // Prepare: a 5-minute tick, a run EventBridge scheduled 2 s ago, the timeout of that tick.
    const calls: Call[] = [];
    const scheduledAt = Date.now() - 2_000;
    const timeoutMs = replicateTimeoutSeconds(5) * 1_000;

    // Act
    const before = Date.now();
    await replicate(runner(calls), context(timeoutMs - 2_000), {
      ...scheduleInput({ kind: "replicate", worker: 3, time: new Date(scheduledAt).toISOString() }),
      tickMs: 300_000,
    });

    // Assess: the drain starts 10 s into the next tick, and leaves the handoff window and the
    // write stop before the hard deadline.
    const call = calls[0];
    assert.ok(call);
    assert.equal(call.slot, "slot-3");
    const drainAt = call.options?.drainAt ?? 0;
    assert.equal(drainAt, scheduledAt + 300_000 + DRAIN_DELAY_MS);
    const spare = call.deadline - drainAt;
    assert.ok(
      spare >= HANDOFF_WINDOW_MS + WRITE_STOP_MS - 1_000 - (Date.now() - before),
      `spare ${spare} ms`,
    );
  });

  it("gives every run of a container a worker id of its own", async () => {
    const calls: Call[] = [];
    const r = runner(calls);
    await replicate(r, context(60_000), { slot: 1, scheduledAt: null, tickMs: 60_000 });
    await replicate(r, context(60_000), { slot: 2, scheduledAt: null, tickMs: 60_000 });

    assert.equal(new Set(calls.map((c) => c.workerId)).size, 2);
    assert.deepEqual(
      calls.map((c) => c.slot),
      ["slot-1", "slot-2"],
    );
  });

  it("without a tick (not told by the stack) the run does not drain; without a time it counts from its start", async () => {
    const calls: Call[] = [];
    await replicate(runner(calls), context(60_000), { slot: 1, scheduledAt: null, tickMs: null });
    const before = Date.now();
    await replicate(runner(calls), context(60_000), { slot: 1, scheduledAt: null, tickMs: 60_000 });

    assert.equal(calls[0]?.options?.drainAt, undefined);
    const drainAt = calls[1]?.options?.drainAt ?? 0;
    assert.ok(drainAt >= before + 60_000 + DRAIN_DELAY_MS && drainAt <= Date.now() + 60_000 + DRAIN_DELAY_MS);
  });

  it("reads the rule's input and ignores what is not one", () => {
    assert.deepEqual(scheduleInput({ worker: 7, time: "2026-12-01T12:00:00Z" }), {
      slot: 7,
      scheduledAt: Date.parse("2026-12-01T12:00:00Z"),
    });
    for (const event of [null, "x", {}, { worker: 0 }, { worker: "2", time: "soon" }])
      assert.deepEqual(scheduleInput(event), { slot: null, scheduledAt: null });
    assert.equal(tickMs({ KAFKA_MIRROR_TICK_SECONDS: "300" }), 300_000);
    assert.equal(tickMs({ KAFKA_MIRROR_TICK_SECONDS: "x" }), null);
    assert.equal(tickMs({}), null);
  });

  it("the timeout is the tick plus the overlap, and only ticks of 1..13 minutes fit in 15 minutes", () => {
    assert.equal(RUN_OVERLAP_MS, DRAIN_DELAY_MS + HANDOFF_WINDOW_MS + WRITE_STOP_MS + RUN_SAFETY_MARGIN_MS);
    assert.equal(replicateTimeoutSeconds(1), 140);
    assert.deepEqual(OVERLAPPING_TICK_MINUTES, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    assert.equal(drainAtFor(1_000, 60_000), 71_000);
  });
});
