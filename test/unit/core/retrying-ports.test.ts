/**
 * retryingAdmin and retryingReader, the retry layer of the CLI commands, verify and the lag
 * function: a failure that is not retryable is thrown at the first attempt, as it is, with no
 * pause; a retryable one is attempted again. Every admin call and the reader's fetch are covered.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ClusterAdmin } from "../../../lib/core/ports.js";
import type { KafkaRetry } from "../../../lib/core/retry.js";
import { retryingAdmin, retryingReader } from "../../../lib/core/retrying-ports.js";
import { ReplicatorError } from "../../../lib/errors.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords } from "../../helpers/fake-cluster.js";
import { flakyAdmin, flakyReader } from "../../helpers/flaky.js";

const TOPIC = "orders";
/** Each failing method fails this often: far more than a retry budget lets through. */
const ALWAYS = 1_000;

/** A refusal no retry changes (TOPIC_AUTHORIZATION_FAILED and the like). */
const refused = (method: string) =>
  new ReplicatorError("KAFKA_FATAL", `${method}: TOPIC_AUTHORIZATION_FAILED (injected)`, {
    retryable: false,
  });

/** Each admin call, as the CLI or the lag function makes it. */
const ADMIN_CALLS: Record<string, (admin: ClusterAdmin) => Promise<unknown>> = {
  listTopics: (a) => a.listTopics(),
  createTopics: (a) => a.createTopics([{ name: "new", partitions: 1, replicationFactor: 1 }]),
  listOffsets: (a) => a.listOffsets(TOPIC, [0]),
  describeTopicConfigs: (a) => a.describeTopicConfigs([TOPIC]),
  describeBrokerConfigs: (a) => a.describeBrokerConfigs(["transaction.max.timeout.ms"]),
  alterTopicConfigs: (a) => a.alterTopicConfigs([{ topic: TOPIC, set: new Map([["retention.ms", "1"]]) }]),
  createPartitions: (a) => a.createPartitions([{ topic: TOPIC, count: 2 }]),
};

function setup() {
  const clock = new FakeClock();
  const cluster = new InMemoryCluster(clock);
  cluster.createTopic(TOPIC, 1);
  cluster.append({ topic: TOPIC, partition: 0 }, makeRecords(5, 0));
  // The CLI's policy: a budget counted from each call's start.
  const retry: KafkaRetry = { clock, deadline: () => clock.now() + 60_000 };
  return { clock, cluster, retry };
}

describe("retryingAdmin", () => {
  for (const [method, call] of Object.entries(ADMIN_CALLS)) {
    it(`throws a non-retryable ${method} failure at the first attempt, without a pause`, async () => {
      const { clock, cluster, retry } = setup();
      const flaky = flakyAdmin(cluster, { failures: ALWAYS, methods: [method], error: refused });
      const startedAt = clock.now();

      await assert.rejects(call(retryingAdmin(flaky, retry)), { code: "KAFKA_FATAL", retryable: false });

      assert.equal(flaky.failed.get(method), 1);
      assert.equal(clock.now(), startedAt);
    });

    it(`attempts a retryable ${method} failure again (the twin of the case above)`, async () => {
      const { cluster, retry } = setup();
      const flaky = flakyAdmin(cluster, { failures: 2, methods: [method] });

      await call(retryingAdmin(flaky, retry));

      assert.equal(flaky.failed.get(method), 2);
    });
  }
});

describe("retryingReader", () => {
  const tp = { topic: TOPIC, partition: 0 };
  const limits = { maxRecords: 10, maxBytes: 1 << 20, maxWaitMs: 0 };

  it("throws a non-retryable fetch failure at the first attempt, without a pause", async () => {
    const { clock, cluster, retry } = setup();
    const flaky = flakyReader(cluster, { failures: ALWAYS, error: refused });
    const startedAt = clock.now();

    await assert.rejects(retryingReader(flaky, retry).fetch(tp, 0, limits), { code: "KAFKA_FATAL" });

    assert.equal(flaky.failed.get("fetch"), 1);
    assert.equal(clock.now(), startedAt);
  });

  it("attempts a retryable fetch failure again (the twin of the case above)", async () => {
    const { cluster, retry } = setup();
    const flaky = flakyReader(cluster, { failures: 2 });

    const fetched = await retryingReader(flaky, retry).fetch(tp, 0, limits);

    assert.equal(fetched.records.length, 5);
    assert.equal(flaky.failed.get("fetch"), 2);
  });
});
