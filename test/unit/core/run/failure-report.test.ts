/**
 * Which failures are settings no retry can change, and what to change (lib/core/run/failure-report.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configProblem, FailureReport } from "../../../../lib/core/run/failure-report.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { CapturingLogger } from "../../../helpers/fake-observability.js";

const route = { source: { topic: "orders", partition: 3 }, target: { topic: "dr.orders", partition: 3 } };
const rejected = (kafkaError: string) =>
  new ReplicatorError("RECORD_REJECTED", `target refused record 7 for dr.orders/3: ${kafkaError}`, {
    details: { kafkaError },
  });

describe("configProblem", () => {
  it("names the target topic's setting for a record it refuses", () => {
    assert.match(
      configProblem(rejected("MESSAGE_TOO_LARGE"), route)?.fix ?? "",
      /max\.message\.bytes on dr\.orders/,
    );
    assert.match(configProblem(rejected("RECORD_LIST_TOO_LARGE"), route)?.fix ?? "", /target\.compression/);
    assert.match(configProblem(rejected("INVALID_TIMESTAMP"), route)?.fix ?? "", /message\.timestamp\./);
    assert.match(configProblem(rejected("INVALID_RECORD"), route)?.fix ?? "", /cleanup\.policy/);
  });

  it("names leases.durationMs and the brokers' transaction.max.timeout.ms for a refused transaction timeout", () => {
    const refused = new ReplicatorError("KAFKA_FATAL", "InitProducerId failed: INVALID_TRANSACTION_TIMEOUT", {
      details: { kafkaError: "INVALID_TRANSACTION_TIMEOUT", kafkaErrorCode: 50 },
    });
    const problem = configProblem(refused, route);
    assert.equal(problem?.key, "INVALID_TRANSACTION_TIMEOUT", "one per run, whatever the partition");
    assert.match(problem?.fix ?? "", /leases\.durationMs.*transaction\.max\.timeout\.ms/);
  });

  it("is null for failures a retry may fix", () => {
    const fatal = (kafkaError: string) =>
      new ReplicatorError("KAFKA_FATAL", `EndTxn failed: ${kafkaError}`, { details: { kafkaError } });
    assert.equal(configProblem(fatal("INVALID_TXN_STATE"), route), null);
    assert.equal(configProblem(fatal("UNKNOWN_SERVER_ERROR"), route), null);
    assert.equal(configProblem(rejected("CORRUPT_MESSAGE"), route), null, "a batch changed on the way");
    assert.equal(configProblem(new ReplicatorError("CORRUPT_BATCH", "bad crc"), route), null);
  });
});

describe("FailureReport", () => {
  it("says a config problem once per run and target topic, and every other failure each time", () => {
    const logger = new CapturingLogger();
    const report = new FailureReport(logger);
    const backoff = { failures: 1, until: 60_000 };
    const other = { ...route, target: { topic: "dr.payments", partition: 0 } };

    report.failed(route, rejected("MESSAGE_TOO_LARGE"), backoff, 0);
    report.failed(route, rejected("MESSAGE_TOO_LARGE"), { failures: 2, until: 120_000 }, 0);
    report.failed(other, rejected("MESSAGE_TOO_LARGE"), backoff, 0);
    const unknown = new ReplicatorError("KAFKA_FATAL", "failed: UNKNOWN_SERVER_ERROR");
    report.failed(route, unknown, backoff, 0);
    report.failed(route, unknown, backoff, 0);

    assert.deepEqual(
      logger.at("error").map((l) => [l.fields.targetTopic, l.fields.code]),
      [
        ["dr.orders", "RECORD_REJECTED"],
        ["dr.payments", "RECORD_REJECTED"],
        ["dr.orders", "KAFKA_FATAL"],
        ["dr.orders", "KAFKA_FATAL"],
      ],
    );
    assert.deepEqual(
      logger.at("info").map((l) => [l.fields.failures, l.fields.retryInMs]),
      [[2, 120_000]],
    );
  });
});
