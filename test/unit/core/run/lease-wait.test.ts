import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  describeLeaseWait,
  type LeaseHeldElsewhere,
  LeaseWaitNotice,
} from "../../../../lib/core/run/lease-wait.js";
import { CapturingLogger } from "../../../helpers/fake-observability.js";

const NOW = 1_800_000_000_000;

function held(count: number, owner: string, expiresAt: number, from = 0): LeaseHeldElsewhere[] {
  return Array.from({ length: count }, (_, i) => ({ key: `t:${from + i}`, owner, expiresAt }));
}

describe("describeLeaseWait", () => {
  it("names the count, the holder and the longest wait", () => {
    const wait = describeLeaseWait(
      [...held(8, "w-3", NOW + 20_000), ...held(1, "w-3", NOW + 47_200, 8)],
      NOW,
    );
    assert.equal(wait?.text, "waiting for 9 leases held by w-3 to expire (up to 48 s)");
  });

  it("lists every holder; one lease is singular", () => {
    assert.equal(
      describeLeaseWait([...held(1, "w-4", NOW + 5_000), ...held(1, "w-3", NOW + 1_000, 1)], NOW)?.text,
      "waiting for 2 leases held by w-3, w-4 to expire (up to 5 s)",
    );
    assert.equal(
      describeLeaseWait(held(1, "w-3", NOW + 1_000), NOW)?.text,
      "waiting for 1 lease held by w-3 to expire (up to 1 s)",
    );
  });

  it("is null when nothing is waited for, or everything has expired", () => {
    assert.equal(describeLeaseWait([], NOW), null);
    assert.equal(describeLeaseWait(held(3, "w-3", NOW), NOW), null);
  });
});

describe("LeaseWaitNotice", () => {
  it("warns once per picture: again when the count or the holders change, not as time passes", () => {
    const logger = new CapturingLogger();
    const notice = new LeaseWaitNotice(logger);

    notice.update(held(9, "w-3", NOW + 48_000), NOW);
    notice.update(held(9, "w-3", NOW + 48_000), NOW + 1_000);
    notice.update(held(9, "w-3", NOW + 48_000), NOW + 30_000);
    notice.update(held(4, "w-3", NOW + 48_000), NOW + 31_000);
    notice.update([], NOW + 49_000);
    notice.update(held(4, "w-3", NOW + 90_000), NOW + 50_000);

    assert.deepEqual(
      logger.entries.filter((e) => e.level === "warn").map((e) => e.message),
      [
        "waiting for 9 leases held by w-3 to expire (up to 48 s)",
        "waiting for 4 leases held by w-3 to expire (up to 17 s)",
        "waiting for 4 leases held by w-3 to expire (up to 40 s)",
      ],
    );
  });
});
