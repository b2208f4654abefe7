// KafkaClusterAdmin's topic configs and partition growth against real Kafka (KAFKA_TESTBED=real),
// or the mock cluster, whose broker side of these (CreateTopics configs, DescribeConfigs,
// IncrementalAlterConfigs, CreatePartitions) is ours: testbed/mock-kafka/topic-admin.c, pinned by
// an independent client in test/integration/testbed/topic-admin.test.ts. The last test holds the
// in-memory cluster of test/helpers/fake-cluster.ts to the same answers, so on real Kafka it shows that
// the unit tests' fake behaves as Kafka does.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { MirrorRecord } from "../../../lib/core/model.js";
import type { ClusterAdmin } from "../../../lib/core/ports.js";
import { isReplicatorError, type ReplicatorError } from "../../../lib/errors.js";
import { KafkaClusterAdmin } from "../../../lib/kafka/admin/cluster-admin.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster } from "../../helpers/fake-cluster.js";
import { eventually } from "../../helpers/kafka-eventually.js";
import { KAFKA_TESTBED, startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import type { MockKafka } from "../../helpers/mock-kafka.js";

const LIMITS = { maxRecords: 100, maxBytes: 1024 * 1024, maxWaitMs: 100 };
const DESCRIBE_CONFIGS = 32;
const CREATE_PARTITIONS = 37;
const INCREMENTAL_ALTER_CONFIGS = 44;
const NOT_CONTROLLER = 41;
const INVALID_PARTITIONS = 37;

function topicName(): string {
  return `test-topic-${randomUUID()}`;
}

function configs(entries: Record<string, string>): Map<string, string> {
  return new Map(Object.entries(entries));
}

function record(i: number): MirrorRecord {
  return {
    offset: i,
    timestamp: 1_700_000_000_000 + i,
    key: Buffer.from([i]),
    value: Buffer.from([0, i]),
    headers: [],
  };
}

/** Partition count by topic, as `admin`'s Metadata shows it. */
async function partitionCounts(admin: ClusterAdmin): Promise<Map<string, number>> {
  return new Map((await admin.listTopics()).map((t) => [t.name, t.partitions]));
}

/**
 * Until `admin`'s Metadata shows every topic of `counts` with more than its count there: the
 * topics just created (0: absent before) or grown. Kafka answers an admin change once its
 * controller made it; the broker that serves Metadata applies it a moment later
 * (test/helpers/kafka-eventually.ts). The real clusters here have one broker, so one read that
 * shows a change shows it for every later read.
 */
function grownInMetadata(admin: ClusterAdmin, counts: Record<string, number>): Promise<Map<string, number>> {
  return eventually(
    `${Object.keys(counts).join(", ")} in Metadata with more than ${Object.values(counts).join(", ")} partitions`,
    () => partitionCounts(admin),
    (shown) => Object.entries(counts).every(([topic, count]) => (shown.get(topic) ?? 0) > count),
  );
}

/** Until DescribeConfigs answers `topic` with `shows` true of its configs (see grownInMetadata). */
function describedAs(
  admin: ClusterAdmin,
  topic: string,
  shows: (configs: ReadonlyMap<string, string>) => boolean,
): Promise<Map<string, ReadonlyMap<string, string>>> {
  return eventually(
    `the configs of ${topic}`,
    () => admin.describeTopicConfigs([topic]),
    (answer) => {
      const configs = answer.get(topic);
      return configs !== undefined && shows(configs);
    },
  );
}

/** The ReplicatorError `call` rejects with. */
async function failure(call: Promise<unknown>): Promise<ReplicatorError> {
  try {
    await call;
  } catch (error) {
    if (isReplicatorError(error)) return error;
    throw error;
  }
  assert.fail("expected a ReplicatorError");
}

describe("KafkaClusterAdmin: topic configs and partition growth", () => {
  let kafka: TestKafka;
  let admin: KafkaClusterAdmin;
  const common = () => ({
    brokers: kafka.bootstrapServers,
    requestTimeoutMs: 5000,
    connectionTimeoutMs: 2000,
  });

  before(async () => {
    kafka = await startTestKafka({ brokers: KAFKA_TESTBED === "real" ? 1 : 3 });
    admin = new KafkaClusterAdmin(common());
  });

  after(async () => {
    await admin?.close();
    await kafka?.stop();
  });

  /** The mock's fault injection and API version limits, for the tests real Kafka cannot stage. */
  function mock(): MockKafka {
    if (kafka.kind !== "mock") throw new Error("this test needs the mock's fault injection");
    return kafka.mock;
  }

  /**
   * Until DescribeConfigs answers for a topic just created: until then the broker answers
   * UNKNOWN_TOPIC_OR_PARTITION, a missing topic.
   */
  const described = (topic: string) => describedAs(admin, topic, () => true);

  it("creates a topic with configs; describe answers only the ones set on the topic", async () => {
    const topic = topicName();
    const set = configs({
      "cleanup.policy": "compact",
      "retention.ms": "86400000",
      "max.message.bytes": "2097152",
    });

    await admin.createTopics([{ name: topic, partitions: 2, replicationFactor: 1, configs: set }]);
    await described(topic);
    const answer = await admin.describeTopicConfigs([topic]);

    // The broker also answers every other topic config with its default (DEFAULT_CONFIG).
    assert.deepEqual(answer, new Map([[topic, set]]));
  });

  it("answers an empty set for a topic with no configs, and leaves missing topics out", async () => {
    const plain = topicName();
    await admin.createTopics([{ name: plain, partitions: 1, replicationFactor: 1 }]);
    await described(plain);

    const answer = await admin.describeTopicConfigs([plain, topicName(), plain]);

    assert.deepEqual(answer, new Map([[plain, new Map()]]));
    assert.deepEqual(await admin.describeTopicConfigs([]), new Map());
  });

  it("sets configs incrementally: a setting that exists only on the target survives", async () => {
    const topic = topicName();
    await admin.createTopics([
      { name: topic, partitions: 1, replicationFactor: 1, configs: configs({ "min.insync.replicas": "2" }) },
    ]);

    await admin.alterTopicConfigs([
      { topic, set: configs({ "cleanup.policy": "compact", "retention.ms": "1000" }) },
    ]);
    await admin.alterTopicConfigs([{ topic, set: configs({ "retention.ms": "2000" }) }]);
    // The broker applies the controller's changes in order: once the last shows, all do.
    const answer = await describedAs(admin, topic, (c) => c.get("retention.ms") === "2000");

    assert.deepEqual(
      answer,
      new Map([
        [topic, configs({ "min.insync.replicas": "2", "cleanup.policy": "compact", "retention.ms": "2000" })],
      ]),
    );
  });

  // Mock only: Kafka 4 has IncrementalAlterConfigs v1; the launcher can offer v0 alone.
  if (KAFKA_TESTBED === "mock") {
    it("sets configs through IncrementalAlterConfigs v0 when the broker has no v1", async () => {
      const topic = topicName();
      await admin.createTopics([{ name: topic, partitions: 1, replicationFactor: 1 }]);
      await mock().command(`apiversion ${INCREMENTAL_ALTER_CONFIGS} 0 0`);
      const v0Admin = new KafkaClusterAdmin(common());
      try {
        await v0Admin.alterTopicConfigs([{ topic, set: configs({ "segment.ms": "3600000" }) }]);
      } finally {
        await v0Admin.close();
        await mock().command(`apiversion ${INCREMENTAL_ALTER_CONFIGS} 0 1`);
      }

      assert.deepEqual(
        await admin.describeTopicConfigs([topic]),
        new Map([[topic, configs({ "segment.ms": "3600000" })]]),
      );
    });
  }

  it("names the topic when the broker refuses a config; the request's other topics change", async () => {
    const good = topicName();
    const bad = topicName();
    await admin.createTopics([
      { name: good, partitions: 1, replicationFactor: 1 },
      { name: bad, partitions: 1, replicationFactor: 1 },
    ]);

    const refused = await failure(
      admin.alterTopicConfigs([
        { topic: good, set: configs({ "retention.ms": "1000" }) },
        { topic: bad, set: configs({ "retention.ms": "soon" }) },
      ]),
    );
    const missing = await failure(
      admin.alterTopicConfigs([{ topic: "no-such-topic", set: configs({ "retention.ms": "1" }) }]),
    );

    assert.equal(refused.code, "TOPIC_CONFIG_FAILED");
    assert.match(refused.message, new RegExp(`${bad}.*INVALID_CONFIG.*soon`));
    assert.equal(refused.retryable, false);
    assert.deepEqual(refused.details, { topic: bad, kafkaErrorCode: 40, kafkaError: "INVALID_CONFIG" });
    assert.equal(missing.code, "TOPIC_CONFIG_FAILED");
    assert.match(missing.message, /no-such-topic.*UNKNOWN_TOPIC_OR_PARTITION/);
    // Kafka applies each resource on its own: the good topic's change landed (any change shown,
    // then the value).
    const shown = await describedAs(admin, good, (c) => c.size > 0);
    assert.deepEqual(shown.get(good), configs({ "retention.ms": "1000" }));
    assert.deepEqual((await admin.describeTopicConfigs([bad])).get(bad), new Map());
  });

  it("refuses to create a topic with a config the broker does not know, naming the topic", async () => {
    const topic = topicName();

    const refused = await failure(
      admin.createTopics([
        { name: topic, partitions: 1, replicationFactor: 1, configs: configs({ "retention.days": "7" }) },
      ]),
    );

    assert.equal(refused.code, "TOPIC_CREATE_FAILED");
    assert.match(refused.message, new RegExp(`${topic}.*INVALID_CONFIG`));
    assert.deepEqual(await admin.listTopics().then((ts) => ts.filter((t) => t.name === topic)), []);
  });

  it("grows a topic from 4 to 8 partitions; our writer and reader use partition 7 at once", async () => {
    const topic = topicName();
    await admin.createTopics([{ name: topic, partitions: 4, replicationFactor: kafka.brokerIds.length }]);
    const writer = new KafkaPartitionWriter({ ...common(), retryBackoffMs: 50, retryDeadlineMs: 15_000 });
    const reader = new KafkaPartitionReader(common());
    try {
      // Both know the topic with 4 partitions before it grows.
      await writer.write({ topic, partition: 3 }, [record(1)]);
      assert.equal((await reader.fetch({ topic, partition: 3 }, 0, LIMITS)).records.length, 1);

      await admin.createPartitions([{ topic, count: 8 }]);
      const written = await writer.write({ topic, partition: 7 }, [record(7), record(8)]);
      const fetched = await reader.fetch({ topic, partition: 7 }, 0, LIMITS);

      assert.deepEqual(await admin.listTopics().then((ts) => ts.find((t) => t.name === topic)), {
        name: topic,
        partitions: 8,
      });
      assert.equal(written.baseOffset, 0);
      assert.deepEqual(
        fetched.records.map((r) => [r.offset, r.key, r.value]),
        [
          [0, Buffer.from([7]), Buffer.from([0, 7])],
          [1, Buffer.from([8]), Buffer.from([0, 8])],
        ],
      );
      // The old partitions keep what they held.
      assert.equal((await reader.fetch({ topic, partition: 3 }, 0, LIMITS)).records.length, 1);
    } finally {
      await Promise.allSettled([writer.close(), reader.close()]);
    }
  });

  it("leaves a topic already at or above the count as it is, without an error", async () => {
    const topic = topicName();
    await admin.createTopics([{ name: topic, partitions: 6, replicationFactor: 1 }]);
    // Kafka refuses both counts as no increase; the admin takes that as "already grown" once its
    // Metadata shows the topic with that many (before, it reports a retryable failure).
    await grownInMetadata(admin, { [topic]: 0 });

    await admin.createPartitions([{ topic, count: 6 }]);
    await admin.createPartitions([{ topic, count: 3 }]);
    await admin.createPartitions([]);

    assert.deepEqual(await admin.listTopics().then((ts) => ts.find((t) => t.name === topic)), {
      name: topic,
      partitions: 6,
    });
  });

  it("grows several topics in one request, the largest count per topic", async () => {
    const a = topicName();
    const b = topicName();
    await admin.createTopics([
      { name: a, partitions: 1, replicationFactor: 1 },
      { name: b, partitions: 2, replicationFactor: 1 },
    ]);
    // b's count is refused as no increase, taken as "already grown" once Metadata shows b.
    await grownInMetadata(admin, { [a]: 0, [b]: 0 });

    await admin.createPartitions([
      { topic: a, count: 2 },
      { topic: b, count: 2 },
      { topic: a, count: 3 },
    ]);

    // Both topics change in one controller batch: once a's growth shows, b's answer is final too.
    const counts = await grownInMetadata(admin, { [a]: 1 });
    assert.deepEqual([counts.get(a), counts.get(b)], [3, 2]);
  });

  it("names a missing topic, and refuses a count that is not a whole number >= 1 before sending", async () => {
    const missing = await failure(admin.createPartitions([{ topic: "no-such-topic", count: 3 }]));
    const zero = await failure(admin.createPartitions([{ topic: "t", count: 0 }]));
    const fraction = await failure(admin.createPartitions([{ topic: "t", count: 2.5 }]));

    assert.equal(missing.code, "PARTITIONS_CREATE_FAILED");
    assert.match(missing.message, /no-such-topic.*UNKNOWN_TOPIC_OR_PARTITION/);
    assert.deepEqual([zero.code, zero.retryable], ["PARTITIONS_CREATE_FAILED", false]);
    assert.match(zero.message, /topic t must be a whole number >= 1, not 0/);
    assert.match(fraction.message, /not 2\.5/);
  });

  // Mock only: the refusals are injected.
  if (KAFKA_TESTBED === "mock") {
    it("reports a broker's retriable refusal as retryable, naming the topic", async () => {
      const topic = topicName();
      await admin.createTopics([{ name: topic, partitions: 1, replicationFactor: 1 }]);

      await mock().pushRequestErrors(CREATE_PARTITIONS, [NOT_CONTROLLER]);
      const grow = await failure(admin.createPartitions([{ topic, count: 2 }]));
      await mock().pushRequestErrors(DESCRIBE_CONFIGS, [NOT_CONTROLLER]);
      const describeFailure = await failure(admin.describeTopicConfigs([topic]));

      assert.deepEqual(
        [grow.code, grow.retryable, grow.details.topic],
        ["PARTITIONS_CREATE_FAILED", true, topic],
      );
      assert.deepEqual([describeFailure.code, describeFailure.retryable], ["TOPIC_CONFIG_FAILED", true]);
      // The next attempt goes through.
      await admin.createPartitions([{ topic, count: 2 }]);
      assert.deepEqual(await admin.describeTopicConfigs([topic]), new Map([[topic, new Map()]]));
    });

    // Regression: a broker behind the controller made "already grown" a final failure.
    it("reports Kafka's 'no increase' as retryable while Metadata still shows fewer partitions", async () => {
      // Prepare: growing to 2 is refused as no increase while Metadata shows 1, as a broker that
      // has not applied another client's growth yet answers.
      const topic = topicName();
      await admin.createTopics([{ name: topic, partitions: 1, replicationFactor: 1 }]);
      await mock().pushRequestErrors(CREATE_PARTITIONS, [INVALID_PARTITIONS]);

      // Act
      const behind = await failure(admin.createPartitions([{ topic, count: 2 }]));

      // Assess: the caller's next attempt reads Metadata again.
      assert.deepEqual(
        [behind.code, behind.retryable, behind.details.topic, behind.details.kafkaError],
        ["PARTITIONS_CREATE_FAILED", true, topic, "INVALID_PARTITIONS"],
      );
      assert.match(behind.message, /INVALID_PARTITIONS.*Metadata read after it shows 1 partitions/);
    });
  }
});

/**
 * One admin scenario, its outcome as plain data: what each step answered (an error as its code
 * and retryability) and the topics' configs and partition counts at the end. Where a step reads
 * what an earlier one changed, it first waits until the change shows (real Kafka's brokers apply
 * it a moment after the controller answered; the in-memory cluster at once).
 */
async function scenario(admin: ClusterAdmin, a: string, b: string): Promise<unknown[]> {
  const step = async (call: () => Promise<unknown>) =>
    call().then(
      (value) => ({ value }),
      (error: unknown) =>
        isReplicatorError(error)
          ? { code: error.code, retryable: error.retryable, topic: error.details.topic }
          : error,
    );
  const outcomes = [
    await step(() =>
      admin.createTopics([
        { name: a, partitions: 2, replicationFactor: 1, configs: configs({ "retention.ms": "1000" }) },
        { name: b, partitions: 4, replicationFactor: 1 },
      ]),
    ),
    // Growing b to 4 and to 1 is refused as no increase, "already grown" once Metadata shows b.
    await grownInMetadata(admin, { [a]: 0, [b]: 0 }).then(() => "created"),
    await step(() => admin.alterTopicConfigs([{ topic: a, set: configs({ "cleanup.policy": "compact" }) }])),
    await step(() => admin.alterTopicConfigs([{ topic: b, set: configs({ "retention.ms": "5000" }) }])),
    await step(() =>
      admin.alterTopicConfigs([{ topic: "no-such-topic", set: configs({ "retention.ms": "1" }) }]),
    ),
    await step(() => admin.createPartitions([{ topic: a, count: 3 }])),
    await step(() => admin.createPartitions([{ topic: b, count: 4 }])),
    await step(() => admin.createPartitions([{ topic: b, count: 1 }])),
    await step(() => admin.createPartitions([{ topic: "no-such-topic", count: 1 }])),
    // Each topic of a request on its own, as Kafka applies them: the known one changes.
    await step(() =>
      admin.alterTopicConfigs([
        { topic: a, set: configs({ "segment.ms": "3600000" }) },
        { topic: "no-such-topic", set: configs({ "retention.ms": "1" }) },
      ]),
    ),
    await step(() =>
      admin.createPartitions([
        { topic: b, count: 5 },
        { topic: "no-such-topic", count: 2 },
      ]),
    ),
    // Refused or skipped before anything is sent.
    await step(() => admin.alterTopicConfigs([{ topic: "no-such-topic", set: new Map() }])),
    await step(() => admin.createPartitions([{ topic: b, count: 6.5 }])),
    // b's growth to 5 was the last change; the broker applies them in order.
    await grownInMetadata(admin, { [b]: 4 }).then(() => "grown"),
    await step(() => admin.describeTopicConfigs([a, b, "no-such-topic"])),
  ];
  const counts = await partitionCounts(admin);
  return [...outcomes, counts.get(a), counts.get(b)];
}

describe("the in-memory cluster's topic admin answers as KafkaClusterAdmin does", () => {
  let kafka: TestKafka;
  before(async () => {
    kafka = await startTestKafka({ brokers: 1 });
  });
  after(() => kafka?.stop());

  it("gives the same outcome for one scenario of configs and partition growth", async () => {
    const admin = new KafkaClusterAdmin({ brokers: kafka.bootstrapServers, requestTimeoutMs: 5000 });
    try {
      const [a, b] = [topicName(), topicName()];

      const real = await scenario(admin, a, b);
      const fake = await scenario(new InMemoryCluster(new FakeClock()), a, b);

      assert.deepEqual(fake, real);
    } finally {
      await admin.close();
    }
  });
});
