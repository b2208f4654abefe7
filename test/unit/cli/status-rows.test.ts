import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatStatus } from "../../../lib/cli/commands/status.js";
import { statusRows } from "../../../lib/cli/status-rows.js";
import type { Lease } from "../../../lib/core/ports.js";
import { leaseOf } from "../../helpers/fake-leases.js";

const NOW = 1_800_000_000_000;

function lease(partition: number, fields: Partial<Lease>): Lease {
  return leaseOf({ topic: "BIN-BI-TOPIC", partition }, { counter: 1, ...fields });
}

const offsets = [
  { partition: 1, logStartOffset: 0, logEndOffset: 500 },
  { partition: 0, logStartOffset: 100, logEndOffset: 900 },
  { partition: 2, logStartOffset: 0, logEndOffset: 50 },
  { partition: 3, logStartOffset: 400, logEndOffset: 1_000 },
];

describe("statusRows", () => {
  const leases = [
    lease(0, { owner: "w1", expiresAt: NOW + 5_000, checkpoint: 850, lastProgressAt: NOW - 2_000 }),
    lease(1, { owner: "w2", expiresAt: NOW - 1, checkpoint: 500, lastProgressAt: NOW - 90_000 }),
    // Retention deleted records past the checkpoint: lag counts from the log start.
    lease(3, { checkpoint: 100 }),
  ];
  const rows = statusRows([{ name: "BIN-BI-TOPIC", offsets }], leases, "earliest", NOW);

  it("has one row per partition, in partition order, with lag from the checkpoint to the log end", () => {
    assert.deepEqual(
      rows.map((r) => [r.partition, r.checkpoint, r.logEnd, r.lag]),
      [
        [0, 850, 900, 50],
        [1, 500, 500, 0],
        [2, null, 50, 50],
        [3, 100, 1_000, 600],
      ],
    );
  });

  it("shows an owner only while its lease is unexpired", () => {
    assert.deepEqual(
      rows.map((r) => r.owner),
      ["w1", null, null, null],
    );
  });

  it("names the lease item's owner and its expiry, expired or not; neither for a free lease", () => {
    assert.deepEqual(
      rows.map((r) => [r.heldBy, r.expiresAt]),
      [
        ["w1", NOW + 5_000],
        ["w2", NOW - 1],
        [null, null],
        [null, null],
      ],
    );
  });

  it("counts no lag for a partition without checkpoint when workers start from the latest offset", () => {
    const latest = statusRows([{ name: "BIN-BI-TOPIC", offsets }], [], "latest", NOW);
    assert.deepEqual(
      latest.map((r) => r.lag),
      [0, 0, 0, 0],
    );
  });

  it("renders the offset checker's columns", () => {
    const text = formatStatus(rows, NOW);
    const lines = text.split("\n");
    assert.match(
      lines[0] ?? "",
      /^Topic\s+Pid\s+Owner\s+Expires\s+Checkpoint\s+LogEnd\s+Lag\s+LastProgress$/,
    );
    assert.match(lines[1] ?? "", /^BIN-BI-TOPIC\s+0\s+w1\s+in 5 s\s+850\s+900\s+50\s+2 s ago$/);
    assert.match(lines[2] ?? "", /^BIN-BI-TOPIC\s+1\s+w2\s+0 s ago \(expired\)\s+500\s+500\s+0\s+90 s ago$/);
    assert.match(lines[3] ?? "", /^BIN-BI-TOPIC\s+2\s+-\s+-\s+-\s+50\s+50\s+-$/);
  });
});
