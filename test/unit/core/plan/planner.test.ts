import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_CONFIG_SYNC, MAX_MESSAGE_BYTES_HEADROOM } from "../../../../lib/core/plan/config-sync.js";
import { planTopics, readDrift } from "../../../../lib/core/plan/planner.js";
import type { KafkaRetry } from "../../../../lib/core/retry.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { FakeClock } from "../../../helpers/fake-clock.js";
import { InMemoryCluster } from "../../../helpers/fake-cluster.js";
import { fakeMapping } from "../../../helpers/fake-mapping.js";
import { flakyAdmin } from "../../../helpers/flaky.js";

function options(source: InMemoryCluster, target: InMemoryCluster, retry: KafkaRetry) {
  return {
    sourceAdmin: source,
    targetAdmin: target,
    mapping: fakeMapping(),
    replicationFactor: 1,
    configSync: DEFAULT_CONFIG_SYNC,
    retry,
  };
}

function clusters() {
  const clock = new FakeClock();
  // The planning's deadline: a minute of (fake) time for creations to be retried in.
  const retry = { clock, deadline: clock.now() + 60_000 };
  return { clock, retry, source: new InMemoryCluster(clock), target: new InMemoryCluster(clock) };
}

describe("planTopics", () => {
  it("creates missing target topics with the source's partition count and routes p to p", async () => {
    // Prepare
    const { source, target, retry } = clusters();
    source.createTopic("orders", 6);
    source.createTopic("__consumer_offsets", 50);

    // Act
    const plan = await planTopics({
      sourceAdmin: source,
      targetAdmin: target,
      mapping: fakeMapping({ rename: (t) => `dr.${t}` }),
      replicationFactor: 3,
      configSync: DEFAULT_CONFIG_SYNC,
      retry,
    });

    // Assess
    assert.deepEqual(target.createTopicCalls, [{ name: "dr.orders", partitions: 6, replicationFactor: 3 }]);
    assert.deepEqual(plan.errors, []);
    assert.deepEqual(
      plan.partitions.map((r) => [r.source.topic, r.source.partition, r.target.topic, r.target.partition]),
      [0, 1, 2, 3, 4, 5].map((p) => ["orders", p, "dr.orders", p]),
    );
  });

  it("grows a target with fewer partitions, keeps one with more, and routes all of them", async () => {
    // Prepare
    const { source, target, retry } = clusters();
    source.createTopic("a", 4);
    source.createTopic("b", 2);
    source.createTopic("c", 2);
    target.createTopic("a", 3);
    target.createTopic("b", 5);

    // Act
    const plan = await planTopics(options(source, target, retry));

    // Assess
    assert.deepEqual(plan.errors, []);
    assert.deepEqual(target.createPartitionCalls, [{ topic: "a", count: 4 }]);
    assert.equal((await target.listTopics()).find((t) => t.name === "b")?.partitions, 5, "more stays");
    assert.deepEqual(
      plan.partitions.map((r) => `${r.source.topic}/${r.source.partition}->${r.target.partition}`),
      ["a/0->0", "a/1->1", "a/2->2", "a/3->3", "b/0->0", "b/1->1", "c/0->0", "c/1->1"],
    );
    assert.deepEqual(
      plan.drift.map((d) => [d.source, d.partitions]),
      [
        ["a", "grow"],
        ["b", "ok"],
        ["c", "create"],
      ],
    );
  });

  it("a target that cannot be grown is an error naming the topic and both counts; the others go on", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("a", 8);
    source.createTopic("b", 1);
    target.createTopic("a", 4);
    target.createPartitions = async () => {
      throw new ReplicatorError("KAFKA_FATAL", "CreatePartitions refused: POLICY_VIOLATION");
    };

    const plan = await planTopics(options(source, target, retry));

    assert.equal(plan.errors.length, 1);
    const [only] = plan.errors;
    assert.equal(only?.topic, "a");
    assert.equal(only?.error.code, "TARGET_PARTITIONS_TOO_FEW");
    assert.match(only?.error.message ?? "", /target topic a has 4 partitions .* the 8 of source topic a/);
    assert.deepEqual(only?.error.details, {
      sourceTopic: "a",
      targetTopic: "a",
      sourcePartitions: 8,
      targetPartitions: 4,
    });
    assert.deepEqual(
      plan.partitions.map((r) => r.source.topic),
      ["b"],
    );
  });

  it("grows a topic someone else created too small meanwhile (counts are read after creating)", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("a", 4);
    // Another worker wins the creation race with a wrong count: our create is "already exists".
    const create = target.createTopics.bind(target);
    target.createTopics = async (specs) => {
      target.createTopic("a", 2);
      await create(specs);
    };

    const plan = await planTopics(options(source, target, retry));

    assert.deepEqual(plan.errors, []);
    assert.deepEqual(target.createPartitionCalls, [{ topic: "a", count: 4 }]);
    assert.equal(plan.partitions.length, 4);
  });

  it("creates a compacted source's target compacted, with its retention settings", async () => {
    // Prepare
    const { source, target, retry } = clusters();
    source.createTopic("users", 2);
    source.setTopicConfigs("users", {
      "cleanup.policy": "compact",
      "min.compaction.lag.ms": "60000",
      "delete.retention.ms": "3600000",
      "retention.ms": "-1",
      "min.insync.replicas": "2",
    });

    // Act
    await planTopics(options(source, target, retry));

    // Assess
    assert.deepEqual(Object.fromEntries(target.topicConfigs("users")), {
      "cleanup.policy": "compact",
      "min.compaction.lag.ms": "60000",
      "delete.retention.ms": "3600000",
      "retention.ms": "-1",
    });
  });

  it("sets changed source configs on an existing target and keeps settings only the target has", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("logs", 1);
    target.createTopic("logs", 1);
    source.setTopicConfigs("logs", { "retention.ms": "86400000", "max.message.bytes": "4194304" });
    target.setTopicConfigs("logs", { "retention.ms": "3600000", "retention.bytes": "1073741824" });

    const plan = await planTopics(options(source, target, retry));

    assert.deepEqual(plan.warnings, []);
    assert.deepEqual(Object.fromEntries(target.topicConfigs("logs")), {
      "retention.ms": "86400000",
      "retention.bytes": "1073741824",
      "max.message.bytes": String(4194304 + MAX_MESSAGE_BYTES_HEADROOM),
    });
    // In sync now: the next planning changes nothing.
    const again = await planTopics(options(source, target, retry));
    assert.deepEqual(
      again.drift.map((d) => d.configs),
      [[]],
    );
    assert.equal(target.alterConfigCalls.length, 1);
  });

  it("a config change the target refuses is a warning: the topic is still mirrored", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("logs", 1);
    target.createTopic("logs", 1);
    source.setTopicConfigs("logs", { "retention.ms": "1" });
    target.alterTopicConfigs = async () => {
      throw new ReplicatorError("KAFKA_FATAL", "POLICY_VIOLATION");
    };

    const plan = await planTopics(options(source, target, retry));

    assert.deepEqual(plan.errors, []);
    assert.equal(plan.partitions.length, 1);
    assert.deepEqual(
      plan.warnings.map((w) => w.topic),
      ["logs"],
    );
    assert.match(
      plan.warnings[0]?.error.message ?? "",
      /setting retention\.ms on logs failed: POLICY_VIOLATION/,
    );
  });

  it("warns of a target compression.type that would recompress target.compression's batches, and leaves it", async () => {
    const { source, target, retry } = clusters();
    for (const topic of ["own", "producer", "synced"]) {
      source.createTopic(topic, 1);
      target.createTopic(topic, 1);
    }
    // Set on the target alone: never deleted, so only a person can change it.
    target.setTopicConfigs("own", { "compression.type": "gzip" });
    target.setTopicConfigs("producer", { "compression.type": "producer" });
    // Set by the source: sync gives the target the codec instead.
    source.setTopicConfigs("synced", { "compression.type": "lz4" });
    const zstd = {
      ...options(source, target, retry),
      configSync: { ...DEFAULT_CONFIG_SYNC, compressionType: "zstd" },
    };

    const plan = await planTopics(zstd);

    assert.equal(plan.partitions.length, 3, "every topic is still mirrored");
    assert.deepEqual(
      plan.warnings.map((w) => [w.topic, w.error.code]),
      [["own", "TOPIC_CONFIG_FAILED"]],
    );
    assert.match(
      plan.warnings[0]?.error.message ?? "",
      /compression\.type=gzip on own makes its broker recompress the zstd batches we send \(target\.compression\): set it to zstd or producer/,
    );
    assert.equal(target.topicConfigs("own").get("compression.type"), "gzip");
    assert.equal(target.topicConfigs("synced").get("compression.type"), "zstd");
    // Without target.compression, the batches' own codec is the source's: nothing to warn of.
    assert.deepEqual((await planTopics(options(source, target, retry))).warnings, []);
  });

  it("source configs that cannot be read (no permission): copying goes on, but no target is created without them", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("logs", 1);
    source.createTopic("users", 1);
    target.createTopic("logs", 1);
    source.describeTopicConfigs = async () => {
      throw new ReplicatorError("AUTHENTICATION_FAILED", "not authorized to describe configs");
    };

    const plan = await planTopics(options(source, target, retry));

    assert.deepEqual(
      plan.partitions.map((r) => r.source.topic),
      ["logs"],
    );
    assert.match(plan.warnings[0]?.error.message ?? "", /reading the source topics' configs failed/);
    assert.deepEqual(
      plan.errors.map((e) => [e.topic, e.error.code]),
      [["users", "TOPIC_CREATE_FAILED"]],
    );
    assert.match(
      plan.errors[0]?.error.message ?? "",
      /not created: the source topic's configs could not be read/,
    );
    assert.deepEqual(target.createTopicCalls, []);
  });

  it("readDrift changes nothing", async () => {
    const { source, target } = clusters();
    source.createTopic("new", 2);
    source.createTopic("grown", 8);
    target.createTopic("grown", 4);
    source.setTopicConfigs("grown", { "retention.ms": "1000" });

    const drift = await readDrift({
      sourceAdmin: source,
      targetAdmin: target,
      mapping: fakeMapping(),
      configSync: DEFAULT_CONFIG_SYNC,
    });

    assert.deepEqual(
      drift.topics.map((d) => [d.source, d.partitions, d.configs.map((c) => c.name)]),
      [
        ["grown", "grow", ["retention.ms"]],
        ["new", "create", []],
      ],
    );
    assert.deepEqual(target.createTopicCalls, []);
    assert.deepEqual(target.createPartitionCalls, []);
    assert.deepEqual(target.alterConfigCalls, []);
  });

  it("turns a mapping that throws for one topic into an error for that topic only", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("good", 1);
    source.createTopic("bad", 1);

    const plan = await planTopics({
      sourceAdmin: source,
      targetAdmin: target,
      mapping: fakeMapping({
        rename: (t) => {
          if (t === "bad") throw new Error("renamed name is not a valid topic name");
          return t;
        },
      }),
      replicationFactor: 1,
      configSync: DEFAULT_CONFIG_SYNC,
      retry,
    });

    assert.deepEqual(
      plan.partitions.map((r) => r.source.topic),
      ["good"],
    );
    assert.equal(plan.errors.length, 1);
    assert.equal(plan.errors[0]?.topic, "bad");
    assert.equal(plan.errors[0]?.error.code, "CONFIG_INVALID");
  });

  it("reports a failed creation for that topic only", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("ok", 1);
    source.createTopic("denied", 1);
    const create = target.createTopics.bind(target);
    target.createTopics = async (specs) => {
      if (specs.some((s) => s.name === "denied")) {
        throw new ReplicatorError("TOPIC_CREATE_FAILED", "policy violation", {
          retryable: false,
          details: { topic: "denied" },
        });
      }
      await create(specs);
    };

    const plan = await planTopics({
      sourceAdmin: source,
      targetAdmin: target,
      mapping: fakeMapping(),
      replicationFactor: 1,
      configSync: DEFAULT_CONFIG_SYNC,
      retry,
    });

    assert.deepEqual(
      plan.partitions.map((r) => r.source.topic),
      ["ok"],
    );
    assert.deepEqual(
      plan.errors.map((e) => [e.topic, e.error.code]),
      [["denied", "TOPIC_CREATE_FAILED"]],
    );
  });

  it("refuses two source topics that map to the same target topic", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("eu.orders", 1);
    source.createTopic("us.orders", 1);
    source.createTopic("other", 1);

    const plan = await planTopics({
      sourceAdmin: source,
      targetAdmin: target,
      mapping: fakeMapping({ rename: (t) => t.replace(/^(eu|us)\./, "") }),
      replicationFactor: 1,
      configSync: DEFAULT_CONFIG_SYNC,
      retry,
    });

    assert.deepEqual(
      plan.partitions.map((r) => r.source.topic),
      ["other"],
    );
    assert.deepEqual(
      plan.errors.map((e) => [e.topic, e.error.code]),
      [
        ["eu.orders", "CONFIG_INVALID"],
        ["us.orders", "CONFIG_INVALID"],
      ],
    );
  });

  it("retries a creation that failed transiently, so the topic is not left out of the run", async () => {
    // Prepare: the controller answers the first CreateTopics with a retryable failure.
    const { source, target, retry } = clusters();
    source.createTopic("orders", 2);
    const flaky = flakyAdmin(target, { methods: ["createTopics"] });

    // Act
    const plan = await planTopics({
      sourceAdmin: source,
      targetAdmin: flaky,
      mapping: fakeMapping(),
      replicationFactor: 1,
      configSync: DEFAULT_CONFIG_SYNC,
      retry,
    });

    // Assess
    assert.equal(flaky.failed.get("createTopics"), 1);
    assert.deepEqual(plan.errors, []);
    assert.deepEqual(
      plan.partitions.map((r) => `${r.source.topic}/${r.source.partition}`),
      ["orders/0", "orders/1"],
    );
  });

  it("charges a creation still failing at the planning's deadline to that topic only", async () => {
    // Prepare: "down" never gets created; the deadline ends its retries.
    const { clock, source, target, retry } = clusters();
    source.createTopic("down", 1);
    source.createTopic("up", 1);
    const create = target.createTopics.bind(target);
    target.createTopics = async (specs) => {
      if (specs.some((s) => s.name === "down")) throw new ReplicatorError("KAFKA_RETRIABLE", "no controller");
      await create(specs);
    };

    // Act
    const plan = await planTopics({
      sourceAdmin: source,
      targetAdmin: target,
      mapping: fakeMapping(),
      replicationFactor: 1,
      configSync: DEFAULT_CONFIG_SYNC,
      retry,
    });

    // Assess
    assert.ok(clock.now() <= retry.deadline, "no retry past the deadline");
    assert.deepEqual(
      plan.partitions.map((r) => r.source.topic),
      ["up"],
    );
    assert.deepEqual(
      plan.errors.map((e) => [e.topic, e.error.code]),
      [["down", "KAFKA_RETRIABLE"]],
    );
  });
});
