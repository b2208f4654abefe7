/**
 * CLI `run` rounds overlap (issue 13): each round is a worker of its own in one slot, started
 * shortly before the one before drains, so no round starts from nothing.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { overlappingRounds } from "../../../../lib/cli/commands/run.js";
import type { RunSummary } from "../../../../lib/core/run/run-summary.js";
import type { ReplicateOptions, Worker } from "../../../../lib/core/run/worker.js";

interface Round {
  readonly workerId: string;
  readonly slot: string;
  readonly startedAt: number;
  readonly deadline: number;
  readonly drainAt: number | undefined;
  endedAt?: number;
}

/** Workers that run until their deadline (as today's protocol does) or until aborted. */
function runner(rounds: Round[]) {
  return {
    workerId: "cli-1",
    workerFor: ({ workerId, slot }: { workerId: string; slot: string }) =>
      ({
        replicate(deadline: number, options: ReplicateOptions = {}): Promise<RunSummary> {
          const round: Round = { workerId, slot, startedAt: Date.now(), deadline, drainAt: options.drainAt };
          rounds.push(round);
          return new Promise((resolve) => {
            const end = () => {
              clearTimeout(timer);
              round.endedAt = Date.now();
              resolve({
                workerId,
                startedAt: 0,
                endedAt: 0,
                endReason: "deadline",
                partitions: [],
                errors: [],
                caughtUp: false,
                emptySelection: null,
              });
            };
            const timer = setTimeout(end, Math.max(0, deadline - Date.now()));
            options.signal?.addEventListener("abort", end, { once: true });
          });
        },
      }) as unknown as Worker,
  };
}

describe("run: overlapping rounds", () => {
  it("starts each round before the last drains, one slot, a worker id per round, and waits for all on abort", async () => {
    const rounds: Round[] = [];
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 1_100);

    const summaries = await overlappingRounds(runner(rounds), abort.signal, {
      roundMs: 400,
      leadMs: 100,
      handoffMs: 300,
    });

    assert.ok(rounds.length >= 3, `rounds: ${rounds.length}`);
    assert.equal(summaries.length, rounds.length);
    assert.deepEqual(new Set(rounds.map((r) => r.slot)), new Set(["cli-1"]));
    assert.equal(new Set(rounds.map((r) => r.workerId)).size, rounds.length);
    for (let i = 1; i < rounds.length; i++) {
      const before = rounds[i - 1] as Round;
      const next = rounds[i] as Round;
      // The next round is running when the one before starts draining.
      assert.ok(next.startedAt <= (before.drainAt ?? 0) - 50, `round ${i + 1} started late`);
      assert.equal(before.deadline - (before.drainAt ?? 0), 300);
    }
    for (const r of rounds) assert.ok(r.endedAt !== undefined, `${r.workerId} still running`);
  });
});
