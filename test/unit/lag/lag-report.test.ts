import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Lease } from "../../../lib/core/ports.js";
import { lagReport, type PartitionLagInput, partitionLag } from "../../../lib/lag/lag-report.js";
import { leaseOf } from "../../helpers/fake-leases.js";

const NOW = 1_700_000_000_000;
const STALL_AFTER = 300_000;

function lease(fields: Partial<Lease>): Lease {
  return leaseOf({ topic: "T", partition: 0 }, { counter: 1, ...fields });
}

function input(fields: Partial<PartitionLagInput> = {}): PartitionLagInput {
  return {
    topic: "T",
    partition: 0,
    offsets: { partition: 0, logStartOffset: 100, logEndOffset: 1_000 },
    startFrom: "earliest",
    ...fields,
  };
}

describe("partitionLag", () => {
  it("is zero when the checkpoint is the log end, however old the last progress", () => {
    const lag = partitionLag(
      input({ lease: lease({ checkpoint: 1_000, lastProgressAt: NOW - 3_600_000 }) }),
      NOW,
      STALL_AFTER,
    );
    assert.deepEqual(lag, {
      topic: "T",
      partition: 0,
      lagRecords: 0,
      lagSeconds: 0,
      owned: false,
      stalled: false,
    });
  });

  it("counts from the checkpoint to the log end and dates it by the oldest pending record", () => {
    const lag = partitionLag(
      input({
        lease: lease({ checkpoint: 400, lastProgressAt: NOW - 10_000 }),
        oldestPendingTimestamp: NOW - 90_500,
      }),
      NOW,
      STALL_AFTER,
    );
    assert.equal(lag.lagRecords, 600);
    assert.equal(lag.lagSeconds, 90);
    assert.equal(lag.stalled, false);
  });

  it("falls back to the time since the last progress when the pending record could not be read", () => {
    const lag = partitionLag(
      input({ lease: lease({ checkpoint: 400, lastProgressAt: NOW - 42_000 }) }),
      NOW,
      STALL_AFTER,
    );
    assert.equal(lag.lagSeconds, 42);
  });

  it("measures a partition without a lease item or checkpoint from where the worker would start", () => {
    assert.equal(partitionLag(input(), NOW, STALL_AFTER).lagRecords, 900);
    assert.equal(partitionLag(input({ startFrom: "latest" }), NOW, STALL_AFTER).lagRecords, 0);
  });

  it("counts from the log start when retention passed the checkpoint", () => {
    assert.equal(partitionLag(input({ lease: lease({ checkpoint: 10 }) }), NOW, STALL_AFTER).lagRecords, 900);
  });

  it("is stalled only with lag and no progress for longer than the stall window", () => {
    const stale = lease({ checkpoint: 400, lastProgressAt: NOW - STALL_AFTER - 1 });
    const fresh = lease({ checkpoint: 400, lastProgressAt: NOW - STALL_AFTER + 1_000 });
    assert.equal(partitionLag(input({ lease: stale }), NOW, STALL_AFTER).stalled, true);
    assert.equal(partitionLag(input({ lease: fresh }), NOW, STALL_AFTER).stalled, false);
    // Never progressed: the age of the pending data decides.
    const never = lease({ checkpoint: null });
    assert.equal(
      partitionLag(input({ lease: never, oldestPendingTimestamp: NOW - STALL_AFTER - 1 }), NOW, STALL_AFTER)
        .stalled,
      true,
    );
  });

  it("reports a lease as owned only while its holder's expiry is ahead", () => {
    assert.equal(
      partitionLag(input({ lease: lease({ owner: "w1", expiresAt: NOW + 1 }) }), NOW, STALL_AFTER).owned,
      true,
    );
    assert.equal(
      partitionLag(input({ lease: lease({ owner: "w1", expiresAt: NOW }) }), NOW, STALL_AFTER).owned,
      false,
    );
  });
});

describe("lagReport", () => {
  it("sums records and takes the maximum age per topic, then the maxima over topics", () => {
    const p = (
      topic: string,
      partition: number,
      lagRecords: number,
      lagSeconds: number,
      stalled = false,
    ) => ({
      topic,
      partition,
      lagRecords,
      lagSeconds,
      owned: false,
      stalled,
    });
    const report = lagReport([p("B", 0, 10, 5), p("A", 0, 100, 1), p("A", 1, 50, 30, true), p("B", 1, 0, 0)]);
    assert.deepEqual(report.topics, [
      { topic: "A", lagRecords: 150, lagSeconds: 30, stalledPartitions: 1 },
      { topic: "B", lagRecords: 10, lagSeconds: 5, stalledPartitions: 0 },
    ]);
    assert.equal(report.maxLagRecords, 150);
    assert.equal(report.maxLagSeconds, 30);
    assert.equal(report.stalledPartitions, 1);
  });

  it("reports zeros, not nothing, when no topic is selected", () => {
    const report = lagReport([]);
    assert.deepEqual([report.maxLagRecords, report.maxLagSeconds, report.stalledPartitions], [0, 0, 0]);
  });
});
