/**
 * retryingGroups, the retry layer of group sync (the CLI's offsets and failover, the lag
 * function's sync step): a failure that is not retryable (a refused commit, an ACL) is thrown at
 * the first attempt, with no pause; a retryable one is attempted again. Every call is covered.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { GroupAdmin } from "../../../lib/core/ports.js";
import type { KafkaRetry } from "../../../lib/core/retry.js";
import { ReplicatorError } from "../../../lib/errors.js";
import { retryingGroups } from "../../../lib/offsets/retrying-groups.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { FakeGroupAdmin } from "../../helpers/fake-groups.js";

const GROUP = "billing";
/** Queued failures: far more than one attempt would use. */
const QUEUED = 5;

const CALLS: Record<Exclude<keyof GroupAdmin, "close">, (groups: GroupAdmin) => Promise<unknown>> = {
  listGroups: (g) => g.listGroups(),
  describeGroups: (g) => g.describeGroups([GROUP]),
  fetchOffsets: (g) => g.fetchOffsets(GROUP),
  commitOffsets: (g) => g.commitOffsets(GROUP, [{ topic: "orders", partition: 0, offset: 4 }]),
};

function setup() {
  const clock = new FakeClock();
  const retry: KafkaRetry = { clock, deadline: () => clock.now() + 60_000 };
  return { clock, groups: new FakeGroupAdmin(), retry };
}

describe("retryingGroups", () => {
  for (const [method, call] of Object.entries(CALLS) as [
    keyof typeof CALLS,
    (g: GroupAdmin) => Promise<unknown>,
  ][]) {
    it(`throws a non-retryable ${method} failure at the first attempt, without a pause`, async () => {
      const { clock, groups, retry } = setup();
      const refused = new ReplicatorError("GROUP_ADMIN_FAILED", `${method}: GROUP_AUTHORIZATION_FAILED`, {
        retryable: false,
      });
      for (let i = 0; i < QUEUED; i++) groups.failNext(method, refused);
      const startedAt = clock.now();

      await assert.rejects(call(retryingGroups(groups, retry)), refused);

      assert.equal(groups.calls.get(method), 1);
      assert.equal(clock.now(), startedAt);
    });

    it(`attempts a retryable ${method} failure again (the twin of the case above)`, async () => {
      const { groups, retry } = setup();
      for (let i = 0; i < 2; i++) {
        groups.failNext(
          method,
          new ReplicatorError("GROUP_ADMIN_FAILED", `${method}: COORDINATOR_NOT_AVAILABLE`),
        );
      }

      await call(retryingGroups(groups, retry));

      assert.equal(groups.calls.get(method), 3);
    });
  }
});
