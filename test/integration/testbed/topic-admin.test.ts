// Pins the test broker's topic admin handlers (ours, not librdkafka's: the mock has none;
// testbed/mock-kafka/topic-admin.c) with independent clients only: librdkafka's Admin API
// (.testbed/bin/admin-client, testbed/admin-client/) and kcat (Debian's, librdkafka 2.0.2) for
// metadata, produce and fetch; kafkajs 2.2.4's admin (not our adapter) for the versions it
// speaks. With MOCK_KAFKA_NO_TOPIC_ADMIN=1 (upstream's mock) they fail
// (TESTING.md).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { type ConfigResourceTypes, Kafka, logLevel } from "kafkajs";
import { KCAT, kcatProduce, kcatRead } from "../../helpers/kcat.js";
import { MOCK_KAFKA_BINARY, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const ADMIN_CLIENT = join(dirname(MOCK_KAFKA_BINARY), "admin-client");
const run = promisify(execFile);
/** kafkajs's ConfigResourceTypes.TOPIC (its enum is not a named export Node's ESM loader sees). */
const TOPIC_RESOURCE = 2 as ConfigResourceTypes;

interface ConfigLine {
  readonly source: string;
  readonly isDefault: boolean;
  readonly value: string;
}

/** What admin-client printed: the CONFIG lines by name, and its RESULT line. */
interface AdminAnswer {
  readonly configs: Map<string, ConfigLine>;
  readonly err: string;
  readonly message: string;
}

function topicName(): string {
  return `test-topic-${randomUUID()}`;
}

describe("test bed: topic admin requests, seen by independent clients", () => {
  let kafka: MockKafka;
  let bootstrap: string;

  /** One admin-client run (see admin-client.c for the commands). */
  async function admin(...args: string[]): Promise<AdminAnswer> {
    const { stdout } = await run(ADMIN_CLIENT, [bootstrap, ...args], { timeout: 60_000 });
    const configs = new Map<string, ConfigLine>();
    let result: { err: string; message: string } | undefined;
    for (const line of stdout.split("\n")) {
      const config = /^CONFIG name=(\S+) source=(\S+) default=([01]) value=(.*)$/.exec(line);
      if (config?.[1] !== undefined) {
        configs.set(config[1], {
          source: config[2] ?? "",
          isDefault: config[3] === "1",
          value: config[4] ?? "",
        });
      }
      const done = /^RESULT err=(\S+) message=(.*)$/.exec(line);
      if (done) result = { err: done[1] ?? "", message: done[2] ?? "" };
    }
    assert.ok(result, `admin-client ${args.join(" ")} printed no RESULT: ${stdout}`);
    return { configs, ...result };
  }

  /** Values set on the topic (source DYNAMIC_TOPIC_CONFIG), by name. */
  async function topicSet(topic: string): Promise<Record<string, string>> {
    const answer = await admin("describe", topic);
    assert.equal(answer.err, "NO_ERROR", answer.message);
    const set: Record<string, string> = {};
    for (const [name, c] of answer.configs) if (c.source === "DYNAMIC_TOPIC_CONFIG") set[name] = c.value;
    return set;
  }

  /** Partition ids of the topic as kcat's metadata request (librdkafka 2.0.2) sees them. */
  async function kcatPartitions(topic: string): Promise<number[]> {
    const { stdout } = await run(KCAT, ["-b", bootstrap, "-L", "-J", "-t", topic], { timeout: 30_000 });
    const metadata = JSON.parse(stdout) as {
      topics: { topic: string; partitions: { partition: number }[] }[];
    };
    return metadata.topics.find((t) => t.topic === topic)?.partitions.map((p) => p.partition) ?? [];
  }

  before(async () => {
    kafka = await startMockKafka({ brokers: 3 });
    bootstrap = kafka.bootstrapServers.join(",");
  });

  after(async () => {
    await kafka?.stop();
  });

  it("CreateTopics stores configs: set ones are DYNAMIC_TOPIC_CONFIG, every other one its default", async () => {
    const topic = topicName();

    const created = await admin(
      "create-topic",
      topic,
      "2",
      "3",
      "cleanup.policy=compact",
      "retention.ms=3600000",
    );
    const described = await admin("describe", topic);

    assert.equal(created.err, "NO_ERROR", created.message);
    assert.deepEqual(described.configs.get("cleanup.policy"), {
      source: "DYNAMIC_TOPIC_CONFIG",
      isDefault: false,
      value: "compact",
    });
    assert.deepEqual(described.configs.get("retention.ms"), {
      source: "DYNAMIC_TOPIC_CONFIG",
      isDefault: false,
      value: "3600000",
    });
    assert.deepEqual(described.configs.get("max.message.bytes"), {
      source: "DEFAULT_CONFIG",
      isDefault: true,
      value: "1048588",
    });
    assert.deepEqual(described.configs.get("min.insync.replicas"), {
      source: "DEFAULT_CONFIG",
      isDefault: true,
      value: "1",
    });
    assert.equal(described.configs.size, 31, "Kafka 3.7's topic configs");
  });

  it("CreateTopics refuses an unknown config name or a bad value, and creates nothing", async () => {
    const unknown = topicName();
    const bad = topicName();

    const refusedName = await admin("create-topic", unknown, "1", "1", "retention.days=7");
    const refusedValue = await admin("create-topic", bad, "1", "1", "cleanup.policy=forever");

    assert.deepEqual(
      [refusedName.err, refusedName.message],
      ["INVALID_CONFIG", "Unknown topic config name: retention.days"],
    );
    assert.equal(refusedValue.err, "INVALID_CONFIG");
    assert.match(refusedValue.message, /forever.*cleanup\.policy/);
    assert.equal((await admin("describe", unknown)).err, "UNKNOWN_TOPIC_OR_PART");
    assert.equal((await admin("describe", bad)).err, "UNKNOWN_TOPIC_OR_PART");
  });

  it("DescribeConfigs: a names filter, a missing topic, a broker resource", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "1", "1", "segment.ms=60000");

    const some = await admin("describe", topic, "segment.ms", "retention.bytes", "no.such.config");
    const missing = await admin("describe", "no-such-topic");
    const broker = await admin("describe-broker", "1");

    assert.deepEqual([...some.configs.keys()].sort(), ["retention.bytes", "segment.ms"]);
    assert.deepEqual(
      [missing.err, missing.message],
      ["UNKNOWN_TOPIC_OR_PART", "The topic 'no-such-topic' does not exist."],
    );
    // The test bed keeps no broker configs: an empty answer, not an error.
    assert.deepEqual([broker.err, broker.configs.size], ["NO_ERROR", 0]);
  });

  it("IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT; validate_only changes nothing", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "1", "1", "retention.ms=1000", "min.insync.replicas=2");

    const checked = await admin("--validate-only", "alter", topic, "set:retention.ms=5");
    const untouched = await topicSet(topic);
    const altered = await admin(
      "alter",
      topic,
      "set:max.message.bytes=2097152",
      "delete:retention.ms",
      "append:cleanup.policy=compact",
    );
    const afterAlter = await topicSet(topic);
    const subtracted = await admin("alter", topic, "subtract:cleanup.policy=delete");

    assert.equal(checked.err, "NO_ERROR");
    assert.deepEqual(untouched, { "retention.ms": "1000", "min.insync.replicas": "2" });
    assert.equal(altered.err, "NO_ERROR", altered.message);
    // APPEND starts from the default ("delete") when the topic has no value; DELETE reverts to it.
    assert.deepEqual(afterAlter, {
      "min.insync.replicas": "2",
      "max.message.bytes": "2097152",
      "cleanup.policy": "delete,compact",
    });
    assert.equal(subtracted.err, "NO_ERROR");
    assert.deepEqual(await topicSet(topic), {
      "min.insync.replicas": "2",
      "max.message.bytes": "2097152",
      "cleanup.policy": "compact",
    });
  });

  it("IncrementalAlterConfigs refuses as Kafka does and then changes nothing of the resource", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "1", "1", "retention.ms=1000");

    const unknown = await admin("alter", topic, "set:retention.ms=2000", "set:no.such.config=1");
    const notList = await admin("alter", topic, "append:retention.ms=5");
    const badValue = await admin("alter", topic, "set:min.insync.replicas=0");
    const missing = await admin("alter", "no-such-topic", "set:retention.ms=1");

    assert.deepEqual(
      [unknown.err, unknown.message],
      ["INVALID_CONFIG", "Unknown topic config name: no.such.config"],
    );
    assert.deepEqual(
      [notList.err, notList.message],
      ["INVALID_CONFIG", "Config value append is not allowed for config key: retention.ms"],
    );
    assert.equal(badValue.err, "INVALID_CONFIG");
    assert.equal(missing.err, "UNKNOWN_TOPIC_OR_PART");
    assert.deepEqual(await topicSet(topic), { "retention.ms": "1000" });
  });

  it("AlterConfigs replaces the whole set: a value the request leaves out goes back to its default", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "1", "1", "retention.ms=1000", "min.insync.replicas=2");

    const replaced = await admin("replace", topic, "cleanup.policy=compact");

    assert.equal(replaced.err, "NO_ERROR", replaced.message);
    assert.deepEqual(await topicSet(topic), { "cleanup.policy": "compact" });
  });

  it("a topic deleted and created again starts without the old topic's configs", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "1", "1", "retention.ms=1000");

    await kafka.deleteTopic(topic);
    await kafka.createTopic(topic, 1, 1);

    assert.deepEqual(await topicSet(topic), {});
  });

  it("CreatePartitions grows a live topic: kcat sees 8 partitions, writes to and reads partition 7", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "4", "3");
    // Two batches in partition 3, so its log is a list of two when the partitions move.
    for (const value of ["b0", "b1"]) {
      await kcatProduce({
        brokers: bootstrap,
        topic,
        partition: 3,
        records: [{ key: null, value: Buffer.from(value) }],
      });
    }

    const checked = await admin("--validate-only", "create-partitions", topic, "8");
    const stillFour = await kcatPartitions(topic);
    const grown = await admin("create-partitions", topic, "8");
    const after = [
      { key: Buffer.from("k7"), value: Buffer.from([0, 1, 2]) },
      { key: null, value: Buffer.from("second") },
    ];
    await kcatProduce({ brokers: bootstrap, topic, partition: 7, records: after });

    assert.equal(checked.err, "NO_ERROR");
    assert.deepEqual(stillFour, [0, 1, 2, 3]);
    assert.equal(grown.err, "NO_ERROR", grown.message);
    assert.deepEqual(await kcatPartitions(topic), [0, 1, 2, 3, 4, 5, 6, 7]);
    const read7 = await kcatRead({ brokers: bootstrap, topic, partition: 7 });
    assert.deepEqual(
      read7.map((r) => [r.offset, r.key, r.value]),
      [
        [0, Buffer.from("k7"), Buffer.from([0, 1, 2])],
        [1, null, Buffer.from("second")],
      ],
    );
    assert.deepEqual(
      (await kcatRead({ brokers: bootstrap, topic, partition: 3 })).map((r) => r.value),
      [Buffer.from("b0"), Buffer.from("b1")],
    );
  });

  it("a grown topic's old partitions keep working: their first batch deleted, then appended to", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "2", "1");
    for (const value of ["b0", "b1"]) {
      await kcatProduce({
        brokers: bootstrap,
        topic,
        partition: 1,
        records: [{ key: null, value: Buffer.from(value) }],
      });
    }

    assert.equal((await admin("create-partitions", topic, "3")).err, "NO_ERROR");
    // Removing a log's first batch writes through the list head: a head left behind in the
    // freed array would keep the deleted batch (or crash the broker).
    await kafka.command(`delete-records ${topic} 1 1`);
    await kcatProduce({
      brokers: bootstrap,
      topic,
      partition: 1,
      records: [{ key: null, value: Buffer.from("b2") }],
    });

    assert.deepEqual(
      (await kcatRead({ brokers: bootstrap, topic, partition: 1, fromOffset: 1 })).map((r) => [
        r.offset,
        r.value,
      ]),
      [
        [1, Buffer.from("b1")],
        [2, Buffer.from("b2")],
      ],
    );
  });

  it("CreatePartitions refuses a count <= current (INVALID_PARTITIONS) and a missing topic", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "4", "1");

    const same = await admin("create-partitions", topic, "4");
    const fewer = await admin("create-partitions", topic, "2");
    const missing = await admin("create-partitions", "no-such-topic", "3");

    assert.deepEqual([same.err, same.message], ["INVALID_PARTITIONS", "Topic already has 4 partitions."]);
    assert.deepEqual(
      [fewer.err, fewer.message],
      ["INVALID_PARTITIONS", "Topic currently has 4 partitions, which is higher than the requested 2."],
    );
    assert.equal(missing.err, "UNKNOWN_TOPIC_OR_PART");
    assert.deepEqual(await kcatPartitions(topic), [0, 1, 2, 3]);
  });

  it("errors pushed for these API keys are answered for every resource", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "1", "1");
    const POLICY_VIOLATION = 44;

    await kafka.pushRequestErrors(44, [POLICY_VIOLATION]);
    const alter = await admin("alter", topic, "set:retention.ms=1");
    await kafka.pushRequestErrors(37, [POLICY_VIOLATION]);
    const grow = await admin("create-partitions", topic, "2");

    assert.equal(alter.err, "POLICY_VIOLATION");
    assert.equal(grow.err, "POLICY_VIOLATION");
    assert.deepEqual(await topicSet(topic), {});
    assert.deepEqual(await kcatPartitions(topic), [0]);
  });

  it("kafkajs 2.2.4's admin agrees: CreatePartitions v1, DescribeConfigs v2 and v0", async () => {
    const topic = topicName();
    await admin("create-topic", topic, "2", "1", "retention.ms=1000");
    const kafkajs = () =>
      new Kafka({
        brokers: kafka.bootstrapServers,
        logLevel: logLevel.NOTHING,
        retry: { retries: 0 },
      }).admin();
    const newest = kafkajs();
    await newest.connect();
    try {
      await newest.createPartitions({ topicPartitions: [{ topic, count: 5 }] });
      const v2 = await newest.describeConfigs({
        resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ["retention.ms", "segment.ms"] }],
        includeSynonyms: false,
      });
      assert.deepEqual(
        v2.resources[0]?.configEntries.map((e) => [e.configName, e.configValue, e.isDefault, e.configSource]),
        [
          ["retention.ms", "1000", false, 1],
          ["segment.ms", "604800000", true, 5],
        ],
      );
    } finally {
      await newest.disconnect();
    }
    // v0 has no config source: a default is told by is_default alone.
    await kafka.command("apiversion 32 0 0");
    const v0Admin = kafkajs();
    await v0Admin.connect();
    try {
      const v0 = await v0Admin.describeConfigs({
        resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ["retention.ms", "segment.ms"] }],
        includeSynonyms: false,
      });
      assert.deepEqual(
        v0.resources[0]?.configEntries.map((e) => [e.configName, e.isDefault]),
        [
          ["retention.ms", false],
          ["segment.ms", true],
        ],
      );
    } finally {
      await v0Admin.disconnect();
      await kafka.command("apiversion 32 0 4");
    }
    assert.deepEqual(await kcatPartitions(topic), [0, 1, 2, 3, 4]);
  });
});
