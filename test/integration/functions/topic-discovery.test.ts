/**
 * The replicate bundle `cdk synth` produces, while one invocation runs: a matching topic created
 * on the source mid-run arrives in the target within 30 s (with the source's configs), and a
 * source topic grown from 4 to 8 partitions mid-run ends with 8 target partitions, all copied, no
 * error. No lag function runs: the replicate run discovers them itself.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { MirrorRecord } from "../../../lib/core/model.js";
import { createDynamoDbClient } from "../../../lib/dynamodb/client.js";
import { createLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import {
  bundleEnvironment,
  invokeBundle,
  localInvocationVariables,
  plaintextStackParameters,
  type SynthesizedBundles,
  synthesizeBundles,
} from "../../helpers/lambda-bundles.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { ClusterView, committedCount, produceRetrying } from "../../helpers/partition-data.js";

const REGION = "eu-west-1";
const GROWN = "ORDERS";
const NEW = "NEW-EVENTS";

function records(count: number, tag: number): MirrorRecord[] {
  return makeRecords(count, tag).map((r, i) => ({ ...r, offset: i }));
}

describe("the replicate bundle discovers topics and partitions while it runs", () => {
  let bundles: SynthesizedBundles;
  let dynamo: DynamoDbLocal;
  let source: MockKafka;
  let target: MockKafka;
  let writer: KafkaPartitionWriter;
  let sourceView: ClusterView;
  let targetView: ClusterView;
  const table = `leases-${randomUUID()}`;

  before(async () => {
    [bundles, dynamo, source, target] = await Promise.all([
      synthesizeBundles(REGION),
      startDynamoDbLocal(),
      startMockKafka({ brokers: 1 }),
      startMockKafka({ brokers: 1 }),
    ]);
    const client = createDynamoDbClient({
      endpoint: dynamo.endpoint,
      region: REGION,
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      requestTimeoutMs: 5_000,
    });
    await createLeaseTable(client, table);
    client.destroy();
    writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
    sourceView = new ClusterView(source.bootstrapServers);
    targetView = new ClusterView(target.bootstrapServers);
    await sourceView.admin.createTopics([{ name: GROWN, partitions: 4, replicationFactor: 1 }]);
    for (let p = 0; p < 4; p++) await writer.write({ topic: GROWN, partition: p }, records(50, p));
  });

  after(async () => {
    await Promise.allSettled([writer?.close(), sourceView?.close(), targetView?.close()]);
    await Promise.all([source?.stop(), target?.stop(), dynamo?.stop()]);
    bundles?.remove();
  });

  function environment(): Record<string, string> {
    const clusters = { source: source.bootstrapServers, target: target.bootstrapServers };
    const parameters = plaintextStackParameters(clusters, `${GROWN}|NEW-.*`);
    return {
      ...bundleEnvironment(bundles.replicate, parameters, table),
      ...localInvocationVariables(dynamo.endpoint, REGION),
    };
  }

  const copied = (topic: string, partition: number) => committedCount(targetView, { topic, partition });
  const produce = (topic: string, partition: number, batch: MirrorRecord[]) =>
    produceRetrying(writer, { topic, partition }, batch);

  it("copies a topic created mid-invocation within 30 s, and the partitions a topic gained", async (t) => {
    // Act: one invocation with 60 s left (its run ends 10 s before that); the topic appears and
    // the other grows once the run is copying.
    const invocation = invokeBundle(bundles.replicate, environment(), 60_000);
    const started = Date.now();
    while ((await copied(GROWN, 3)) < 50) {
      assert.ok(Date.now() - started < 30_000, "the first topic is copied");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await sourceView.admin.createTopics([
      {
        name: NEW,
        partitions: 2,
        replicationFactor: 1,
        configs: new Map([
          ["cleanup.policy", "compact"],
          ["retention.ms", "-1"],
        ]),
      },
    ]);
    for (let p = 0; p < 2; p++) await produce(NEW, p, records(30, 10 + p));
    const createdAt = Date.now();
    await sourceView.admin.createPartitions([{ topic: GROWN, count: 8 }]);
    for (let p = 0; p < 8; p++) await produce(GROWN, p, records(20, 100 + p));
    let arrival = -1;
    while (Date.now() - createdAt < 30_000) {
      if ((await copied(NEW, 0)) === 30 && (await copied(NEW, 1)) === 30) {
        arrival = Date.now() - createdAt;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const { result } = await invocation;

    // Assess
    assert.ok(arrival >= 0, "the new topic arrived within 30 s");
    t.diagnostic(`the new topic was copied ${arrival} ms after it was created`);
    assert.equal(result.ok, true, result.error);
    assert.equal(result.result?.errors, 0);
    assert.equal((await targetView.admin.listTopics()).find((x) => x.name === GROWN)?.partitions, 8);
    for (let p = 0; p < 8; p++) assert.equal(await copied(GROWN, p), p < 4 ? 70 : 20, `${GROWN}/${p}`);
    assert.deepEqual(
      Object.fromEntries((await targetView.admin.describeTopicConfigs([NEW])).get(NEW) ?? []),
      { "cleanup.policy": "compact", "retention.ms": "-1" },
    );
  });
});
