/**
 * A partition whose pump stops on a non-retryable error (lib/core/run/failure-backoff.ts): it is
 * checkpointed and released, the worker that failed it leaves it alone for its backoff, and the
 * fleet copies it again, another worker at once. Named after the bug they pin: the partition
 * used to be parked with its failing worker until the run ended.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TopicPartition } from "../../../../lib/core/model.js";
import type { LeaseStore } from "../../../../lib/core/ports.js";
import { Worker } from "../../../../lib/core/run/worker.js";
import type { WorkerSettings } from "../../../../lib/core/run/worker-settings.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { fakeMapping } from "../../../helpers/fake-mapping.js";
import { inMemoryWorld } from "../../../helpers/pump-fixture.js";

const SETTINGS: WorkerSettings = {
  batch: { maxRecords: 20, maxBytes: 1 << 20, maxWaitMs: 500 },
  leases: { durationMs: 10_000, renewIntervalMs: 3_000, rebalanceIntervalMs: 2_000 },
  startFrom: "earliest",
  replicationFactor: 1,
  writeSafetyMarginMs: 1_000,
};
const LEASE_MS = SETTINGS.leases.durationMs;
const PARTITIONS = 4;

function env() {
  const world = inMemoryWorld();
  world.source.createTopic("orders", PARTITIONS);
  for (let p = 0; p < PARTITIONS; p++) world.source.append(src(p), makeRecords(100, p));
  return world;
}
type Env = ReturnType<typeof env>;

const src = (partition: number): TopicPartition => ({ topic: "orders", partition });
const dst = (partition: number): TopicPartition => ({ topic: "dr.orders", partition });
const values = (e: Env["source"], tp: TopicPartition) => e.records(tp).map((r) => r.value?.toString("hex"));

function workerFor(e: Env, workerId: string, leases: LeaseStore = e.store): Worker {
  return new Worker({
    workerId,
    source: e.source,
    target: e.target,
    sourceAdmin: e.source,
    targetAdmin: e.target,
    leases,
    mapping: fakeMapping({ rename: (t) => `dr.${t}` }),
    settings: SETTINGS,
    clock: e.clock,
    logger: e.logger,
    metrics: e.metrics,
  });
}

/** What the injected failures did: when, on which partition, whose term; and the writes after. */
interface Failures {
  partition: number | null;
  holder: string | null;
  /** Clock time of each failure injected. */
  readonly at: number[];
  /** Writes that reached the target after the first failure: when, and whose lease it was. */
  readonly writesAfter: { at: number; by: string | null }[];
}

/**
 * Fails the second write to a partition whose lease `holder` says fits, with `error`, `times`
 * times (each later write of that partition fails until then): a non-retryable error, as Kafka's
 * INVALID_TXN_STATE or a rejected record would be.
 */
function failWrites(
  e: Env,
  error: () => ReplicatorError,
  options: { readonly times: number; readonly holder?: string },
): Failures {
  const failures: Failures = { partition: null, holder: null, at: [], writesAfter: [] };
  const writes = new Map<number, number>();
  e.target.hooks.beforeWrite = (tp) => {
    const owner = e.store.get(src(tp.partition))?.owner ?? null;
    const n = (writes.get(tp.partition) ?? 0) + 1;
    writes.set(tp.partition, n);
    const chosen =
      failures.partition === null && n >= 2 && (options.holder === undefined || owner === options.holder);
    if (chosen) failures.partition = tp.partition;
    if (tp.partition !== failures.partition) return;
    if (failures.at.length < options.times) {
      failures.holder ??= owner;
      failures.at.push(e.clock.now());
      throw error();
    }
    failures.writesAfter.push({ at: e.clock.now(), by: owner });
  };
  return failures;
}

const invalidTxnState = () =>
  new ReplicatorError("KAFKA_FATAL", "EndTxn commit for mirror-orders-1 failed: INVALID_TXN_STATE", {
    details: { kafkaError: "INVALID_TXN_STATE" },
  });

function assertAllCopied(e: Env): void {
  for (let p = 0; p < PARTITIONS; p++) {
    assert.deepEqual(
      values(e.target, dst(p)),
      values(e.source, src(p)),
      `orders/${p} not copied exactly once`,
    );
  }
}

describe("a partition stopped on a non-retryable error (regression: parked with its worker for the rest of the run)", () => {
  it("one worker copies it again after its backoff, within two lease durations, from its checkpoint", async () => {
    // Prepare
    const e = env();
    const failed = failWrites(e, invalidTxnState, { times: 1 });

    // Act
    const summary = await workerFor(e, "A").replicate(e.clock.now() + 6 * LEASE_MS);

    // Assess: nothing lost or repeated (the retry resumed at the checkpoint of what had landed)
    assertAllCopied(e);
    const [failedAt] = failed.at;
    const retry = failed.writesAfter[0];
    assert.ok(failedAt !== undefined && retry !== undefined, "the failed partition was never written again");
    assert.ok(
      retry.at - failedAt <= 2 * LEASE_MS,
      `copied again ${retry.at - failedAt} ms after the failure`,
    );
    assert.ok(retry.at - failedAt >= LEASE_MS, `retaken ${retry.at - failedAt} ms after, before its backoff`);
    const partition = summary.partitions.find((p) => p.source.partition === failed.partition);
    assert.equal(partition?.terms, 2);
    assert.equal(partition?.error, null, "its last term ended well");
    assert.deepEqual(
      summary.errors.map((x) => [x.partition, x.code]),
      [[failed.partition, "KAFKA_FATAL"]],
    );
    assert.deepEqual(e.metrics.errors, [
      { topic: "orders", partition: failed.partition, code: "KAFKA_FATAL" },
    ]);
  });

  it("two workers: the other takes it at once, the one that failed it not before its backoff", async () => {
    // Prepare: A starts first and leads; a partition of B's fails. B's claims are watched.
    const e = env();
    const failed = failWrites(e, invalidTxnState, { times: 1, holder: "B" });
    // B's claims after the failure (its first claim may fall in the same virtual millisecond).
    const claimsByB: { partition: number; at: number }[] = [];
    const bLeases = storeWith(e.store, {
      claim: async (observed, owner, expiresAt) => {
        const lease = await e.store.claim(observed, owner, expiresAt);
        if (lease !== null && failed.at.length > 0)
          claimsByB.push({ partition: lease.partition, at: e.clock.now() });
        return lease;
      },
    });
    const deadline = e.clock.now() + 6 * LEASE_MS;

    // Act
    await Promise.all([
      workerFor(e, "A").replicate(deadline),
      workerFor(e, "B", bLeases).replicate(deadline),
    ]);

    // Assess
    assertAllCopied(e);
    assert.equal(failed.holder, "B");
    const [failedAt] = failed.at;
    const retry = failed.writesAfter[0];
    assert.ok(failedAt !== undefined && retry !== undefined, "the failed partition was never written again");
    assert.equal(retry.by, "A");
    assert.ok(
      retry.at - failedAt <= 2 * SETTINGS.leases.rebalanceIntervalMs + 1_000,
      `A took it ${retry.at - failedAt} ms after B failed it`,
    );
    const early = claimsByB.filter((c) => c.partition === failed.partition && c.at < failedAt + LEASE_MS);
    assert.deepEqual(early, [], "B took the partition it failed back before its backoff ended");
    assert.ok(
      e.logger.at("info").some((l) => l.message === "took lease leadership" && l.fields.workerId === "A"),
      "A should lead, so B's own exclusion (not its leadership) keeps it off the partition",
    );
  });

  it("a partition that keeps failing on a config error is tried ever less often, and the setting is named once", async () => {
    // Prepare: the target refuses a record of one partition as too large, every time
    const e = env();
    const tooLarge = () =>
      new ReplicatorError("RECORD_REJECTED", "target refused record 20 for dr.orders/0: MESSAGE_TOO_LARGE", {
        details: { kafkaError: "MESSAGE_TOO_LARGE", kafkaErrorCode: 10 },
      });
    const failed = failWrites(e, tooLarge, { times: Number.POSITIVE_INFINITY });

    // Act
    const summary = await workerFor(e, "A").replicate(e.clock.now() + 20 * LEASE_MS);

    // Assess: backoffs of 1, 2, 4, 8 lease durations (each retried at the next round after it)
    const gaps = failed.at.slice(1).map((t, i) => t - (failed.at[i] ?? t));
    assert.equal(gaps.length, 4, `failures at ${failed.at.map((t) => t - (failed.at[0] ?? t))}`);
    for (const [i, gap] of gaps.entries()) {
      const backoff = LEASE_MS * 2 ** i;
      assert.ok(
        gap >= backoff && gap <= backoff + 2 * SETTINGS.leases.rebalanceIntervalMs,
        `gap ${i}: ${gap} ms`,
      );
    }
    const told = e.logger.at("error").filter((l) => l.fields.partition === failed.partition);
    assert.equal(told.length, 1, "the setting to change is said once per run");
    assert.match(String(told[0]?.fields.fix), /max\.message\.bytes on dr\.orders/);
    const again = e.logger.at("info").filter((l) => l.message.startsWith("partition stopped again"));
    assert.equal(again.length, failed.at.length - 1);
    assert.equal(e.metrics.errors.length, failed.at.length, "every failure is counted");
    assert.equal(summary.errors.length, failed.at.length);
    const lease = e.store.get(src(failed.partition ?? -1));
    assert.deepEqual([lease?.owner, lease?.checkpoint], [null, 20], "checkpointed and given back");
  });
});
