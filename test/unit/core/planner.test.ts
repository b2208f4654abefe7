import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { planTopics } from "../../../lib/core/planner.js";
import { ReplicatorError } from "../../../lib/errors.js";
import { FakeClock, fakeMapping, InMemoryCluster } from "../../helpers/fakes.js";
import { flakyAdmin } from "../../helpers/flaky.js";

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

  it("reports a target with fewer partitions and goes on with the other topics", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("a", 4);
    source.createTopic("b", 2);
    source.createTopic("c", 2);
    target.createTopic("a", 3);
    target.createTopic("b", 5);

    const plan = await planTopics({
      sourceAdmin: source,
      targetAdmin: target,
      mapping: fakeMapping(),
      replicationFactor: 1,
      retry,
    });

    assert.equal(plan.errors.length, 1);
    const [only] = plan.errors;
    assert.equal(only?.topic, "a");
    assert.equal(only?.error.code, "TARGET_PARTITIONS_TOO_FEW");
    assert.deepEqual(only?.error.details, {
      sourceTopic: "a",
      targetTopic: "a",
      sourcePartitions: 4,
      targetPartitions: 3,
    });
    // More target partitions is fine; "c" was created.
    assert.deepEqual(
      plan.partitions.map((r) => `${r.source.topic}/${r.source.partition}->${r.target.partition}`),
      ["b/0->0", "b/1->1", "c/0->0", "c/1->1"],
    );
    assert.deepEqual(
      target.createTopicCalls.map((c) => c.name),
      ["c"],
    );
  });

  it("checks counts after creating, catching a topic someone else created too small meanwhile", async () => {
    const { source, target, retry } = clusters();
    source.createTopic("a", 4);
    // Another worker wins the creation race with a wrong count: our create is "already exists".
    const create = target.createTopics.bind(target);
    target.createTopics = async (specs) => {
      target.createTopic("a", 2);
      await create(specs);
    };

    const plan = await planTopics({
      sourceAdmin: source,
      targetAdmin: target,
      mapping: fakeMapping(),
      replicationFactor: 1,
      retry,
    });

    assert.deepEqual(plan.partitions, []);
    assert.equal(plan.errors[0]?.error.code, "TARGET_PARTITIONS_TOO_FEW");
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
