/**
 * Property: whatever the interleaving of claim, renew, expire, steal, produce, crash and
 * recover, every source offset ends up in the target exactly once and in order. Real
 * PartitionPumps run over the in-memory fakes on virtual time; a crash freezes a holder forever
 * at a chosen write (before it lands, after it lands but before the ack, or mid-batch), like a
 * SIGKILL; an uncertain write lands and then reports a timeout.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { TopicPartition } from "../../../../lib/core/model.js";
import type { Lease } from "../../../../lib/core/ports.js";
import { lastProvenance, type ProvenanceSettings } from "../../../../lib/core/provenance.js";
import { HeldLease } from "../../../../lib/core/pump/held-lease.js";
import { PartitionPump } from "../../../../lib/core/pump/partition-pump.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { FakeClock } from "../../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords } from "../../../helpers/fake-cluster.js";
import { CapturingLogger, CapturingMetrics } from "../../../helpers/fake-observability.js";
import { InMemoryLeaseStore } from "../../../helpers/memory-lease-store.js";

const HEADER = Buffer.from("kafka-mirror.provenance");
const PROVENANCE: ProvenanceSettings = { header: HEADER, sourceAlias: "A", targetAlias: "B" };
const src: TopicPartition = { topic: "src", partition: 0 };
const dst: TopicPartition = { topic: "dst", partition: 0 };
const LEASE_MS = 5_000;

type Fault = "crash-before-write" | "crash-after-landing" | "crash-mid-batch" | "uncertain-write" | "none";

interface Term {
  readonly owner: number;
  /** Which write of the term the fault hits. */
  readonly atWrite: number;
  readonly fault: Fault;
  /** Records the producer appends to the source before this term. */
  readonly produced: number;
  /** Renewals the holder gets (each extends the lease) before it is left to expire. */
  readonly renewals: number;
  /** The lease store is down for this many ms at the start of the term. */
  readonly storeOutageMs: number;
}

const termArb: fc.Arbitrary<Term> = fc.record({
  owner: fc.integer({ min: 0, max: 2 }),
  atWrite: fc.integer({ min: 1, max: 4 }),
  fault: fc.constantFrom<Fault>(
    "crash-before-write",
    "crash-after-landing",
    "crash-mid-batch",
    "uncertain-write",
    "none",
  ),
  produced: fc.integer({ min: 0, max: 40 }),
  renewals: fc.integer({ min: 0, max: 2 }),
  storeOutageMs: fc.constantFrom(0, 0, 1_500),
});

async function until(clock: FakeClock, done: () => boolean, limitMs: number): Promise<boolean> {
  const start = clock.now();
  while (!done()) {
    if (clock.now() - start > limitMs) return false;
    await clock.sleep(10);
  }
  return true;
}

async function scenario(terms: readonly Term[]): Promise<void> {
  const clock = new FakeClock();
  const source = new InMemoryCluster(clock);
  const target = new InMemoryCluster(clock);
  source.createTopic("src", 1);
  target.createTopic("dst", 1);
  const store = new InMemoryLeaseStore();
  await store.ensure([src]);
  let tag = 0;

  const runTerm = async (term: Term, final: boolean): Promise<void> => {
    source.append(src, makeRecords(term.produced, tag++ & 0xff));
    // Whoever held the lease before is frozen or gone: let the lease run out, then steal it.
    clock.advance(LEASE_MS * 3);
    const observed = store.get(src) as Lease;
    const claimed = await store.claim(observed, `w${term.owner}`, clock.now() + LEASE_MS);
    assert.ok(claimed);
    const held = new HeldLease(claimed, { source: src, target: dst }, Number.MAX_SAFE_INTEGER);
    let writes = 0;
    let frozen = false;
    const freeze = () => {
      frozen = true;
      return new Promise<void>(() => {});
    };
    target.hooks = final
      ? {}
      : {
          beforeWrite: (tp, records) => {
            writes++;
            if (writes !== term.atWrite) return;
            if (term.fault === "crash-before-write") return freeze();
            if (term.fault === "crash-mid-batch" && records.length > 1) {
              target.append(tp, records.slice(0, Math.ceil(records.length / 2)));
              return freeze();
            }
          },
          afterWrite: () => {
            if (writes !== term.atWrite) return;
            if (term.fault === "crash-after-landing") return freeze();
            if (term.fault === "uncertain-write") throw new ReplicatorError("KAFKA_RETRIABLE", "timed out");
          },
        };
    store.unavailable = term.storeOutageMs > 0 && !final;
    const logger = new CapturingLogger();
    const pump = new PartitionPump(
      {
        source,
        target,
        sourceAdmin: source,
        store,
        clock,
        logger,
        metrics: new CapturingMetrics(),
        targetTail: { reader: target, admin: target, logger },
      },
      {
        batch: { maxRecords: 7, maxBytes: 1 << 20, maxWaitMs: 100 },
        // As in production: a write takes along what was read ahead already (SourceFeed.withReady).
        writeMaxBytes: 4 << 20,
        startFrom: "earliest",
        writeSafetyMarginMs: 500,
        retry: { initialMs: 20, maxMs: 200 },
        provenance: PROVENANCE,
      },
      held,
    );
    const running = pump.run();
    if (term.storeOutageMs > 0 && !final) {
      await clock.sleep(term.storeOutageMs);
      store.unavailable = false;
    }
    for (let r = 0; r < term.renewals || final; r++) {
      const done = await until(
        clock,
        () => frozen || pump.status.caughtUp || pump.status.stopReason !== null,
        1_000,
      );
      if (done) break;
      try {
        held.update(await store.renew(held.lease, clock.now() + LEASE_MS));
      } catch {
        // Store down or lease gone: no renewal this time; the lease runs out by itself.
      }
    }
    if (final) {
      assert.ok(pump.status.caughtUp, "the last holder did not catch up");
      held.stop();
      const status = await running;
      assert.equal(status.error, null);
    } else if (!frozen) {
      // A holder that did not crash stops at the end of its term, as at a run's deadline.
      held.stop();
      await running;
    }
    target.hooks = {};
  };

  for (const term of terms) await runTerm(term, false);
  await runTerm({ owner: 0, atWrite: 0, fault: "none", produced: 5, renewals: 0, storeOutageMs: 0 }, true);

  const offsets = target.records(dst).map((r) => lastProvenance(r, HEADER)?.offset ?? -1);
  const expected = source.records(src).map((r) => r.offset);
  assert.deepEqual(offsets, expected);
}

describe("lease and intent state machine", () => {
  it("ends with every source offset in the target exactly once, in order", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(termArb, { minLength: 1, maxLength: 8 }), (terms) => scenario(terms)),
      { numRuns: 150 },
    );
  });
});
