// The transaction timeout against a target that does not say its cap: the mock test bed describes
// a BROKER resource as empty, as a Kafka-compatible target without broker configs (or without the
// DescribeConfigs permission) gives nothing. We then ask for the wanted value with one warning,
// and when InitProducerId refuses it (INVALID_TRANSACTION_TIMEOUT, injected: the mock has no cap)
// the partition's write fails with the values named, not a bare Kafka error name.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { settleTransactionTimeout, targetTransactionCap } from "../../../lib/core/run/transaction-timeout.js";
import { KafkaClusterAdmin } from "../../../lib/kafka/admin/cluster-admin.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const INVALID_TRANSACTION_TIMEOUT = 50;
const TIMINGS = { leases: { durationMs: 60_000, renewIntervalMs: 10_000 }, writeSafetyMarginMs: 30_000 };

describe("transaction timeout: a target that does not say its cap", () => {
  let kafka: MockKafka;
  let admin: KafkaClusterAdmin;

  before(async () => {
    kafka = await startMockKafka({ brokers: 3 });
    admin = new KafkaClusterAdmin({ brokers: kafka.bootstrapServers, requestTimeoutMs: 5_000 });
  });

  after(async () => {
    await admin?.close();
    await kafka?.stop();
  });

  it("asks each broker, gets no cap, and says so once", async () => {
    const logger = new CapturingLogger();

    const described = await admin.describeBrokerConfigs(["transaction.max.timeout.ms"]);
    const cap = await targetTransactionCap(admin, logger);

    assert.deepEqual([...described.keys()].sort(), [1, 2, 3], "every broker answered for itself");
    assert.equal(cap, null);
    assert.equal(logger.at("warn").length, 1);
  });

  it("names the values when the brokers then refuse the wanted timeout", async () => {
    // Prepare
    const tp = { topic: `test-topic-${randomUUID()}`, partition: 0 };
    await kafka.createTopic(tp.topic, 1, 1);
    const writer = new KafkaPartitionWriter({
      brokers: kafka.bootstrapServers,
      requestTimeoutMs: 5_000,
      transactions: { alias: `alias-${randomUUID().slice(0, 8)}`, transactionTimeoutMs: 1_000 },
    });
    writer.useTransactionTimeout(settleTransactionTimeout(TIMINGS, null));
    await kafka.pushRequestErrors(ApiKey.InitProducerId, [INVALID_TRANSACTION_TIMEOUT]);

    try {
      // Act, Assess
      await assert.rejects(
        writer.write(tp, [{ offset: 0, timestamp: 0, key: null, value: Buffer.from([1]), headers: [] }]),
        {
          code: "CONFIG_INVALID",
          message:
            /refused transaction\.timeout\.ms 180000 \(INVALID_TRANSACTION_TIMEOUT\).*did not say their cap.*leases\.durationMs \(60000\)/,
        },
      );
    } finally {
      await kafka.clearRequestErrors(ApiKey.InitProducerId);
      await writer.close();
    }
  });
});
