/**
 * The transaction timeout of fenced writes against the target brokers' transaction.max.timeout.ms
 * (lib/core/run/transaction-timeout.ts). Named after the bug they pin: the timeout was never checked
 * against the brokers' cap, so a broker with a lower one refused every InitProducerId
 * (INVALID_TRANSACTION_TIMEOUT) and nothing was copied.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configProblem } from "../../../../lib/core/run/failure-report.js";
import {
  settleTransactionTimeout,
  targetTransactionCap,
  transactionTimeoutBounds,
  transactionTimeoutRefused,
} from "../../../../lib/core/run/transaction-timeout.js";
import { Worker } from "../../../../lib/core/run/worker.js";
import type { WorkerSettings } from "../../../../lib/core/run/worker-settings.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { makeRecords } from "../../../helpers/fake-cluster.js";
import { fakeMapping } from "../../../helpers/fake-mapping.js";
import { FencedWriter } from "../../../helpers/fenced-writer.js";
import { inMemoryWorld } from "../../../helpers/pump-fixture.js";

/** The defaults: leases of 60 s renewed every 10 s, target.requestTimeoutMs 15 s. */
const TIMINGS = { leases: { durationMs: 60_000, renewIntervalMs: 10_000 }, writeSafetyMarginMs: 30_000 };
const CAP = "transaction.max.timeout.ms";
const route = { source: { topic: "orders", partition: 0 }, target: { topic: "dr.orders", partition: 0 } };

describe("transactionTimeoutBounds", () => {
  it("wants three lease durations, at most 15 minutes, and needs a lease plus the write margin", () => {
    assert.deepEqual(transactionTimeoutBounds(TIMINGS), { wantedMs: 180_000, minimumMs: 90_000 });
    const long = { ...TIMINGS, leases: { durationMs: 600_000, renewIntervalMs: 10_000 } };
    assert.deepEqual(transactionTimeoutBounds(long), { wantedMs: 900_000, minimumMs: 630_000 });
  });

  it("never wants less than it needs, even past 15 minutes", () => {
    const longest = { ...TIMINGS, leases: { durationMs: 3_600_000, renewIntervalMs: 10_000 } };
    assert.deepEqual(transactionTimeoutBounds(longest), { wantedMs: 3_630_000, minimumMs: 3_630_000 });
  });
});

describe("settleTransactionTimeout", () => {
  it("asks for the wanted value under Kafka's default cap, and when the brokers did not say", () => {
    assert.equal(settleTransactionTimeout(TIMINGS, 900_000).ms, 180_000);
    assert.equal(settleTransactionTimeout(TIMINGS, null).ms, 180_000);
  });

  it("uses a cap below the wanted value when a write still fits in it", () => {
    const timeout = settleTransactionTimeout(TIMINGS, 120_000);

    assert.equal(timeout.ms, 120_000);
    assert.equal(settleTransactionTimeout(TIMINGS, 90_000).ms, 90_000, "the minimum itself is enough");
  });

  it("refuses a cap below the minimum, naming the cap, the wanted value, leases.durationMs and the fixes", () => {
    assert.throws(
      () => settleTransactionTimeout(TIMINGS, 60_000),
      (error: unknown) => {
        assert.ok(error instanceof ReplicatorError);
        assert.equal(error.code, "CONFIG_INVALID");
        assert.equal(error.retryable, false);
        assert.match(error.message, /transaction\.max\.timeout\.ms \(60000 ms\) is below the 90000 ms/);
        assert.match(error.message, /leases\.durationMs \(60000\) \+ 2 × target\.requestTimeoutMs \(30000\)/);
        assert.match(error.message, /asks for 180000 ms/);
        assert.match(
          error.message,
          /raise transaction\.max\.timeout\.ms on the target brokers to at least 90000 ms/,
        );
        assert.match(error.message, /lower leases\.durationMs to at most 30000 ms/);
        assert.match(
          error.message,
          /above leases\.renewIntervalMs \+ 2 × target\.requestTimeoutMs = 40000 ms/,
        );
        assert.match(error.message, /target\.fencing: none/);
        return true;
      },
    );
  });
});

describe("transactionTimeoutRefused", () => {
  it("names the values and stays a setting failure-report.ts says once per run", () => {
    const cause = new ReplicatorError("KAFKA_FATAL", "InitProducerId failed: INVALID_TRANSACTION_TIMEOUT", {
      details: { kafkaError: "INVALID_TRANSACTION_TIMEOUT", kafkaErrorCode: 50 },
    });

    const error = transactionTimeoutRefused(settleTransactionTimeout(TIMINGS, null), cause);

    assert.equal(error.code, "CONFIG_INVALID");
    assert.equal(error.cause, cause);
    assert.match(error.message, /refused transaction\.timeout\.ms 180000 \(INVALID_TRANSACTION_TIMEOUT\)/);
    assert.match(error.message, /did not say their cap when asked at the start/);
    assert.match(
      error.message,
      /the 90000 ms a write's transaction may stay open: leases\.durationMs \(60000\)/,
    );
    assert.equal(configProblem(error, route)?.key, "INVALID_TRANSACTION_TIMEOUT");
  });
});

describe("targetTransactionCap", () => {
  it("is the lowest cap of the brokers, any of which may coordinate a transactional id", async () => {
    const world = inMemoryWorld();
    world.target.brokerConfigs = [new Map([[CAP, "900000"]]), new Map([[CAP, "300000"]]), new Map()];

    assert.equal(await targetTransactionCap(world.target, world.logger), 300_000);
    assert.deepEqual(world.logger.at("warn"), []);
  });

  it("is null, with one warning, when the brokers refuse to say or say nothing", async () => {
    for (const answer of ["refused", [new Map()]] as const) {
      const world = inMemoryWorld();
      world.target.brokerConfigs = answer;

      assert.equal(await targetTransactionCap(world.target, world.logger), null);
      assert.equal(world.logger.at("warn").length, 1);
      assert.match(
        world.logger.at("warn")[0]?.message ?? "",
        /did not say their transaction\.max\.timeout\.ms/,
      );
    }
  });
});

describe("a run's start with fenced writes", () => {
  const SETTINGS: WorkerSettings = {
    batch: { maxRecords: 20, maxBytes: 1 << 20, maxWaitMs: 500 },
    leases: { durationMs: 10_000, renewIntervalMs: 3_000, rebalanceIntervalMs: 2_000 },
    startFrom: "earliest",
    replicationFactor: 1,
    writeSafetyMarginMs: 1_000,
  };

  function setup(cap: string) {
    const world = inMemoryWorld();
    world.source.createTopic("orders", 1);
    world.source.append({ topic: "orders", partition: 0 }, makeRecords(10, 0));
    world.target.brokerConfigs = [new Map([[CAP, cap]])];
    const writer = new FencedWriter(world.target);
    const worker = new Worker({
      workerId: "w1",
      source: world.source,
      target: writer,
      sourceAdmin: world.source,
      targetAdmin: world.target,
      leases: world.store,
      mapping: fakeMapping({ rename: (t) => `dr.${t}` }),
      settings: SETTINGS,
      clock: world.clock,
      logger: world.logger,
      metrics: world.metrics,
    });
    return { world, writer, worker };
  }

  it("gives the writer the brokers' cap when it is below the wanted value, and copies", async () => {
    // Prepare: wanted 30 s (3 leases), needed 11 s (a lease and the write margin).
    const { world, writer, worker } = setup("20000");

    // Act
    const summary = await worker.replicate(world.clock.now() + 60_000, { stopWhenCaughtUp: true });

    // Assess
    assert.equal(writer.transactionTimeout?.ms, 20_000);
    assert.equal(summary.endReason, "caught-up");
    assert.equal(world.target.records({ topic: "dr.orders", partition: 0 }).length, 10);
  });

  it("refuses to start below the minimum, before it takes a lease or plans a topic", async () => {
    const { world, writer, worker } = setup("10000");

    await assert.rejects(worker.replicate(world.clock.now() + 60_000, { stopWhenCaughtUp: true }), {
      code: "CONFIG_INVALID",
      message: /transaction\.max\.timeout\.ms \(10000 ms\) is below the 11000 ms/,
    });
    assert.equal(writer.transactionTimeout, null);
    assert.equal(world.store.calls.ensure + world.store.calls.claim, 0);
    assert.deepEqual(world.target.createTopicCalls, []);
  });
});
