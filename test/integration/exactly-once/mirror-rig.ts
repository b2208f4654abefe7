/**
 * Shared set-up of the exactly-once integration tests: Kafka clusters by alias (the mock or real
 * Kafka, per KAFKA_TESTBED: test/helpers/kafka-testbed.ts), DynamoDB
 * Local with a table per replicator, and helpers to produce, replicate until caught up and read
 * a partition back. Everything opened is closed by `close()`.
 */
import { randomUUID } from "node:crypto";
import { after, before } from "node:test";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Kafka, logLevel } from "kafkajs";
import { type MirrorConfigInput, parseConfig } from "../../../lib/config/schema.js";
import type { MirrorRecord, TopicPartition } from "../../../lib/core/model.js";
import type { Lease } from "../../../lib/core/ports.js";
import type { RunSummary } from "../../../lib/core/run/run-summary.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { createReplicator } from "../../../lib/replicator.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { CapturingLogger, CapturingMetrics } from "../../helpers/fake-observability.js";
import { startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { ClusterView } from "../../helpers/partition-data.js";

/**
 * A rig for the enclosing describe: started before its tests with one cluster per alias, each
 * holding `topic` (one partition, one replica), and closed after them.
 */
export function useMirrorRig(aliases: readonly string[], topic: string): MirrorRig {
  const rig = new MirrorRig();
  before(async () => {
    await rig.start(aliases);
    for (const alias of aliases) await rig.cluster(alias).createTopic(topic, 1, 1);
  });
  after(() => rig.close());
  return rig;
}

export class MirrorRig {
  readonly clusters = new Map<string, TestKafka>();
  dynamo: DynamoDbLocal | undefined;
  readonly #closers: (() => Promise<unknown>)[] = [];
  readonly #tables = new Map<string, string>();

  /** `brokers` per alias: 1 unless given (3 where a test kills or moves a replica). */
  async start(aliases: readonly string[], brokers: Readonly<Record<string, 1 | 3>> = {}): Promise<void> {
    const started = await Promise.all([
      startDynamoDbLocal(),
      ...aliases.map((alias) => startTestKafka({ brokers: brokers[alias] ?? 1 })),
    ]);
    this.dynamo = started[0] as DynamoDbLocal;
    for (const [i, alias] of aliases.entries()) this.clusters.set(alias, started[i + 1] as TestKafka);
  }

  cluster(alias: string): TestKafka {
    const c = this.clusters.get(alias);
    if (c === undefined) throw new Error(`no cluster ${alias}`);
    return c;
  }

  client(): DynamoDBClient {
    if (this.dynamo === undefined) throw new Error("rig not started");
    const client = this.dynamo.client();
    this.#closers.push(async () => client.destroy());
    return client;
  }

  /**
   * Writes records with distinct binary values (the i-th of a call: key 0xff tag i, value 0xfe tag
   * i as two bytes); returns nothing, the source is the truth. One send, so one batch, unless
   * `perSend` cuts it into sends (batches) of that many records.
   */
  async produce(
    alias: string,
    topic: string,
    partition: number,
    count: number,
    tag: number,
    perSend = count,
  ): Promise<void> {
    const kafka = new Kafka({ brokers: this.cluster(alias).bootstrapServers, logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    try {
      for (let from = 0; from < count; from += Math.max(1, perSend)) {
        const upTo = Math.min(count, from + Math.max(1, perSend));
        await producer.send({
          topic,
          acks: -1,
          messages: Array.from({ length: upTo - from }, (_, k) => {
            const i = from + k;
            return {
              partition,
              key: Buffer.from([0xff, tag, i & 0xff]),
              value: Buffer.from([0xfe, tag, (i >> 8) & 0xff, i & 0xff]),
            };
          }),
        });
      }
    } finally {
      await producer.disconnect();
    }
  }

  /** A new, empty lease table of its own (closed with the rig's DynamoDB Local). */
  async leaseTable(): Promise<string> {
    const table = `leases-${randomUUID()}`;
    await createLeaseTable(this.client(), table);
    return table;
  }

  /**
   * A replicator from one cluster to another (a lease table per mirror), run until caught up.
   * `config.target` adds to the rig's target settings (with copy "batches", no alias);
   * `sourceBrokers` reads the source through other listeners (a proxy in front of it).
   */
  async replicate(
    from: string,
    to: string,
    config: Omit<Partial<MirrorConfigInput>, "target"> & {
      topics: MirrorConfigInput["topics"];
      target?: Partial<MirrorConfigInput["target"]>;
    },
    sourceBrokers: readonly string[] = this.cluster(from).bootstrapServers,
  ): Promise<{ summary: RunSummary; logger: CapturingLogger; metrics: CapturingMetrics }> {
    // One table per mirror (direction and whitelist), kept across runs: a later run of the same
    // mirror resumes from its checkpoints, and two mirrors of one rig never share leases.
    const key = mirrorKey(from, to, config.topics);
    let table = this.#tables.get(key);
    const client = this.client();
    if (table === undefined) {
      table = `leases-${from}-${to}-${randomUUID()}`;
      await createLeaseTable(client, table);
      this.#tables.set(key, table);
    }
    const logger = new CapturingLogger();
    const metrics = new CapturingMetrics();
    const replicator = createReplicator(
      parseConfig({
        ...config,
        source: { brokers: [...sourceBrokers], alias: from, requestTimeoutMs: 5_000 },
        target: {
          brokers: this.cluster(to).bootstrapServers,
          ...(config.target?.copy === "batches" ? {} : { alias: to }),
          requestTimeoutMs: 2_000,
          ...config.target,
        },
        batch: { maxWaitMs: 100, ...config.batch },
        leases: { table, durationMs: 6_000, renewIntervalMs: 1_000, rebalanceIntervalMs: 300 },
      }),
      { dynamodb: client, logger, metrics, workerId: `${from}-to-${to}` },
    );
    try {
      const summary = await replicator.worker.replicate(Date.now() + 30_000, { stopWhenCaughtUp: true });
      return { summary, logger, metrics };
    } finally {
      await replicator.close();
    }
  }

  /** The lease item of `tp` in the table of the mirror `from` > `to` whose whitelist is `tp.topic` (null before any run). */
  async lease(from: string, to: string, tp: TopicPartition): Promise<Lease | null> {
    const tableName = this.#tables.get(mirrorKey(from, to, { whitelist: tp.topic }));
    if (tableName === undefined) return null;
    return new DynamoDbLeaseStore({ client: this.client(), tableName }).lease(tp);
  }

  /** Every committed record of `tp`, once the transactions of writers that stopped have their markers. */
  async read(alias: string, tp: TopicPartition): Promise<MirrorRecord[]> {
    const view = new ClusterView(this.cluster(alias).bootstrapServers);
    try {
      await view.settled(tp);
      return await view.read(tp);
    } finally {
      await view.close();
    }
  }

  async close(): Promise<void> {
    for (const close of this.#closers.reverse()) await close();
    await Promise.allSettled([...[...this.clusters.values()].map((c) => c.stop()), this.dynamo?.stop()]);
  }
}

/** A mirror is its direction and its topic selection. */
function mirrorKey(from: string, to: string, topics: unknown): string {
  return `${from}>${to}>${JSON.stringify(topics ?? null)}`;
}
