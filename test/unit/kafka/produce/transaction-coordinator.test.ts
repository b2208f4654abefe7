// Option checks only: everything that talks to a coordinator is in
// test/integration/kafka/transactions.test.ts, against the mock cluster.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../../lib/errors.js";
import { TransactionCoordinator } from "../../../../lib/kafka/produce/transaction-coordinator.js";
import { KafkaClusterClient } from "../../../../lib/kafka/wire/cluster-client.js";
import { FakeClock } from "../../../helpers/fake-clock.js";

// Never connected: the constructor must refuse bad options before any request.
const client = new KafkaClusterClient({ brokers: ["127.0.0.1:1"] });
const clock = new FakeClock();

describe("TransactionCoordinator options", () => {
  it("accepts a transactional id and the defaults", () => {
    const coordinator = new TransactionCoordinator({ client, clock, transactionalId: "kafka-mirror.a/t/0" });
    assert.equal(coordinator.transactionalId, "kafka-mirror.a/t/0");
  });

  it("refuses an empty or over-long id, a bad transaction timeout and a negative backoff, all at once", () => {
    assert.throws(
      () =>
        new TransactionCoordinator({
          client,
          clock,
          transactionalId: "",
          transactionTimeoutMs: 0,
          retryBackoffMs: -1,
        }),
      (error: unknown) =>
        isReplicatorError(error, "CONFIG_INVALID") &&
        /transactionalId must be 1\.\.32767 bytes, not 0/.test(error.message) &&
        /transactionTimeoutMs must be an integer in 1\.\.2147483647, not 0/.test(error.message) &&
        /retryBackoffMs must be a number >= 0, not -1/.test(error.message),
    );
    assert.throws(
      () => new TransactionCoordinator({ client, clock, transactionalId: "é".repeat(16_384) }),
      /not 32768/,
    );
    assert.throws(
      () => new TransactionCoordinator({ client, clock, transactionalId: "t", transactionTimeoutMs: 1.5 }),
      /not 1\.5/,
    );
  });
});
