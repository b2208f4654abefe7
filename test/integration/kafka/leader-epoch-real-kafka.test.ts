// The reader's current leader epoch (KIP-320) against real Apache Kafka 4.1 (3 KRaft brokers,
// test/helpers/real-kafka.ts): after a leader move, the old leader is a follower, and a follower
// serves a consumer's Fetch v11 from its own log (KIP-392) unless the request's epoch is not its
// own. So the reader's stale metadata, still naming the old leader, is answered when it sends -1
// (right after the move, seen here: no error, no records, high watermark 0, as the follower has
// not caught up), and refused with FENCED_LEADER_EPOCH when it sends the epoch it read under.
// One cluster start (~15 s on 2 cores) for one test; the mock counterpart is leader-epoch.test.ts.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { TopicPartition } from "../../../lib/core/model.js";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import { KafkaErrorCode } from "../../../lib/kafka/wire/error-codes.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { eventually } from "../../helpers/group-client.js";
import { metadata } from "../../helpers/kafka-raw-requests.js";
import { kcatProduce } from "../../helpers/kcat.js";
import { rawFetch, reroutes } from "../../helpers/leader-epoch-probes.js";
import { isRunning } from "../../helpers/processes.js";
import { type RealKafka, startRealKafka } from "../../helpers/real-kafka.js";

const STARTUP_MS = 180_000;
const LIMITS = { maxRecords: 100, maxBytes: 1 << 20, maxWaitMs: 0 };

function values(tag: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`${tag}-${i}`) }));
}

/**
 * kafkajs's createTopics({ waitForLeaders }) gives up at once when a broker that has not yet
 * heard of the new topic answers UNKNOWN_TOPIC_OR_PARTITION (seen on a loaded machine): the
 * topic exists then, so wait for its leader instead.
 */
async function createLedTopic(kafka: RealKafka, topic: string): Promise<void> {
  await kafka.createTopic(topic, 1, 3).catch((error: unknown) => {
    if (!(error instanceof Error && "type" in error && error.type === "UNKNOWN_TOPIC_OR_PARTITION"))
      throw error;
  });
  await eventually(`a leader for ${topic}`, async () => {
    const state = await kafka.partitionState(topic, 0);
    return state.leader >= 0 && state.isr.length === 3 ? state : undefined;
  });
}

describe("leader epochs in Fetch, against real Kafka (3 brokers)", () => {
  let kafka: RealKafka;
  let reader: KafkaPartitionReader | undefined;
  let pids: number[] = [];

  before(
    async () => {
      kafka = await startRealKafka({ brokers: 3 });
      pids = kafka.brokerIds.flatMap((id) => kafka.pid(id) ?? []);
    },
    { timeout: STARTUP_MS },
  );

  after(async () => {
    await reader?.close();
    await kafka?.stop();
    assert.deepEqual(
      pids.filter((pid) => isRunning(pid)),
      [],
      "no broker JVM left",
    );
  });

  const address = (id: number) =>
    kafka.bootstrapServers[kafka.brokerIds.indexOf(id)] ?? assert.fail(`broker ${id}`);

  it("after a leader move, the old leader refuses the old epoch; the reader re-routes once and reads every record", async () => {
    // Prepare: a reader that read under the first leader's epoch.
    const tp: TopicPartition = { topic: `test-topic-${randomUUID()}`, partition: 0 };
    await createLedTopic(kafka, tp.topic);
    await kcatProduce({ brokers: kafka.bootstrapServers, ...tp, records: values("a", 3) });
    const logger = new CapturingLogger();
    reader = new KafkaPartitionReader({ brokers: kafka.bootstrapServers, requestTimeoutMs: 10_000, logger });
    assert.equal((await reader.fetch(tp, 0, LIMITS)).records.length, 3);
    const first = await kafka.partitionState(tp.topic, 0);
    const next = first.isr.find((id) => id !== first.leader) ?? assert.fail("no follower in sync");

    // The leader moves; the old one, now a follower, knows the new epoch (it may learn it late).
    await kafka.moveLeader(tp.topic, 0, next);
    const moved = await kafka.partitionState(tp.topic, 0);
    await kcatProduce({ brokers: kafka.bootstrapServers, ...tp, records: values("b", 2) });
    const old = address(first.leader);
    await eventually(`broker ${first.leader} at epoch ${moved.leaderEpoch}`, async () => {
      const state = (await metadata(old, [tp.topic])).topics.get(tp.topic)?.partitions[0];
      return state?.leaderEpoch === moved.leaderEpoch ? state : undefined;
    });
    assert.equal(await rawFetch(old, tp, 0, first.leaderEpoch), KafkaErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(await rawFetch(old, tp, 0, -1), KafkaErrorCode.NONE, "a follower answers 'no epoch'");

    // Act: the reader's metadata still names the old leader.
    const fetched = await reader.fetch(tp, 0, LIMITS);

    // Assess
    assert.deepEqual(
      fetched.records.map((r) => r.value?.toString()),
      ["a-0", "a-1", "a-2", "b-0", "b-1"],
    );
    assert.deepEqual(reroutes(logger), ["KafkaPartitionError: FENCED_LEADER_EPOCH"]);
    assert.equal((await reader.describePartition(tp)).leaderEpoch, moved.leaderEpoch);
  });
});
