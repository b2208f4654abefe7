/**
 * The soak's world: two 1-broker mock clusters, DynamoDB Local behind a counting proxy, the
 * lease table, the source topics; steady traffic, a lease sampler and, at the end, the copy
 * compared record by record (lib/verify) and one result per mode.
 */

import type { TopicPartition } from "../../lib/core/model.js";
import { DynamoDbLeaseStore } from "../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../lib/dynamodb/lease-table.js";
import { KafkaClusterAdmin } from "../../lib/kafka/admin/cluster-admin.js";
import { KafkaPartitionReader } from "../../lib/kafka/read/source-reader.js";
import { comparePartition } from "../../lib/verify/compare-partition.js";
import { clientFor, type DynamoDbLocal, startDynamoDbLocal } from "../../test/helpers/dynamodb-local.js";
import { type MockKafka, startMockKafka } from "../../test/helpers/mock-kafka.js";
import { type CountingProxy, startCountingProxy, totalCalls } from "./dynamodb-counter.js";
import { LeaseSampler } from "./lease-sampler.js";
import { Traffic } from "./traffic.js";

export interface SoakOptions {
  readonly topics: number;
  readonly partitions: number;
  readonly rate: number;
  /**
   * One more topic, whose partitions get a record each every this many seconds (0: none): a
   * partition that caught up while a poll was out waits for that poll (up to batch.maxWaitMs).
   */
  readonly sparseSeconds: number;
  /** The workers' batch.maxWaitMs: how long a poll of caught-up partitions may be held. */
  readonly maxWaitMs: number;
}

export interface ModeResult {
  readonly mode: string;
  readonly seconds: number;
  readonly produced: number;
  readonly received: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  readonly max_no_copy_ms: number;
  /** SoakOptions.maxWaitMs. */
  readonly max_wait_ms: number;
  /** The sparse topic's records (SoakOptions.sparseSeconds; null without one). */
  readonly sparse: {
    every_s: number;
    records: number;
    p50_ms: number;
    p99_ms: number;
    max_ms: number;
  } | null;
  readonly holderless_fraction_max: number;
  readonly holderless_fraction_mean: number;
  readonly max_holderless_ms: number;
  readonly handoffs: number;
  readonly dynamodb_calls_per_min: number;
  readonly dynamodb_calls: Record<string, number>;
  readonly verified: boolean;
  readonly mismatches: string[];
}

export class SoakRig {
  source!: MockKafka;
  target!: MockKafka;
  dynamo!: DynamoDbLocal;
  proxy!: CountingProxy;
  readonly table = `soak-${process.pid}-${Date.now()}`;
  /** Every partition copied: the steady topics', then the sparse topic's. */
  readonly partitions: TopicPartition[] = [];
  readonly topicPattern: string;
  readonly #options: SoakOptions;
  readonly #topics: string[] = [];

  constructor(options: SoakOptions, prefix: string) {
    this.#options = options;
    const topics = options.topics + (options.sparseSeconds > 0 ? 1 : 0);
    for (let t = 0; t < topics; t++) {
      this.#topics.push(`${prefix}-${t}`);
      for (let p = 0; p < options.partitions; p++)
        this.partitions.push({ topic: `${prefix}-${t}`, partition: p });
    }
    this.topicPattern = `${prefix}-[0-9]+`;
  }

  /** SoakOptions.maxWaitMs, for the modes' worker configs. */
  get maxWaitMs(): number {
    return this.#options.maxWaitMs;
  }

  async start(): Promise<void> {
    [this.source, this.target, this.dynamo] = await Promise.all([
      startMockKafka({ brokers: 1 }),
      startMockKafka({ brokers: 1 }),
      startDynamoDbLocal(),
    ]);
    this.proxy = await startCountingProxy(this.dynamo.endpoint);
    const client = clientFor(this.dynamo.endpoint);
    try {
      await createLeaseTable(client, this.table);
    } finally {
      client.destroy();
    }
    for (const topic of this.#topics) await this.source.createTopic(topic, this.#options.partitions);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([
      this.proxy?.stop(),
      this.source?.stop(),
      this.target?.stop(),
      this.dynamo?.stop(),
    ]);
  }

  /** Runs `workers` (started by the mode) under traffic for the mode's duration; measures all. */
  async measure(
    mode: string,
    runWorkers: (traffic: Traffic) => Promise<void>,
    log: (line: string) => void,
  ): Promise<ModeResult> {
    const steady = this.#options.topics * this.#options.partitions;
    const { sparseSeconds } = this.#options;
    const traffic = new Traffic(
      this.source.bootstrapServers,
      this.target.bootstrapServers,
      this.partitions.slice(0, steady),
      this.#options.rate,
      sparseSeconds > 0 ? { partitions: this.partitions.slice(steady), everyMs: sparseSeconds * 1000 } : null,
    );
    const client = clientFor(this.dynamo.endpoint);
    const store = new DynamoDbLeaseStore({ client, tableName: this.table });
    const sampler = new LeaseSampler(() => store.list());
    traffic.start();
    const workers = runWorkers(traffic);
    // Measured once the workers copy every partition: start-up (claims, connections, topic
    // creation) is not what the soak is about.
    await traffic.warmedUp(WARM_UP_MS);
    log(`${mode}: every partition copies; measuring`);
    traffic.measureFromNow();
    const before = this.proxy.counts();
    const started = Date.now();
    sampler.start(250);
    // Holders are counted while traffic flows: afterwards the runs end and release their leases.
    void traffic.productionEnded.then(() => sampler.stop());
    try {
      await workers;
    } finally {
      sampler.stop();
    }
    const seconds = (Date.now() - started) / 1000;
    const counts = difference(this.proxy.counts(), before);
    const latency = await traffic.stop(5_000);
    log(`${mode}: produced ${latency.produced}, received ${latency.received}; verifying the copy`);
    const mismatches = await this.verify();
    client.destroy();
    const stats = [...sampler.stats().values()];
    const fractions = stats.map((s) => s.holderlessFraction);
    return {
      mode,
      seconds: Math.round(seconds),
      produced: latency.produced,
      received: latency.received,
      p50_ms: latency.p50Ms,
      p99_ms: latency.p99Ms,
      max_ms: latency.maxMs,
      max_no_copy_ms: latency.maxNoCopyMs,
      max_wait_ms: this.maxWaitMs,
      sparse:
        latency.sparse === null
          ? null
          : {
              every_s: sparseSeconds,
              records: latency.sparse.records,
              p50_ms: latency.sparse.p50Ms,
              p99_ms: latency.sparse.p99Ms,
              max_ms: latency.sparse.maxMs,
            },
      holderless_fraction_max: round(Math.max(0, ...fractions)),
      holderless_fraction_mean: round(fractions.reduce((a, b) => a + b, 0) / Math.max(1, fractions.length)),
      max_holderless_ms: Math.max(0, ...stats.map((s) => s.maxHolderlessMs)),
      handoffs: stats.reduce((n, s) => n + s.holderChanges, 0),
      dynamodb_calls_per_min: Math.round((totalCalls(counts) / seconds) * 60),
      dynamodb_calls: counts,
      verified: mismatches.length === 0,
      mismatches,
    };
  }

  /** Every source partition against its copy: same records, same order, nothing extra. */
  async verify(): Promise<string[]> {
    const side = (brokers: string[]) => ({
      reader: new KafkaPartitionReader({ brokers, clientId: "soak-verify" }),
      admin: new KafkaClusterAdmin({ brokers, clientId: "soak-verify" }),
    });
    const source = side(this.source.bootstrapServers);
    const target = side(this.target.bootstrapServers);
    const problems: string[] = [];
    try {
      for (const tp of this.partitions) {
        const where = `${tp.topic}/${tp.partition}`;
        const c = await comparePartition(source, target, tp, tp, { mirrorHeader: PROVENANCE_HEADER }).catch(
          (error: unknown) => {
            problems.push(`${where}: not compared: ${String(error)}`);
            return null;
          },
        );
        if (c === null) continue;
        if (c.mismatch !== null) problems.push(`${where}: ${c.mismatch.kind} ${c.mismatch.message}`);
        else if (c.sourceRecords !== c.targetRecords) problems.push(`${where}: counts differ`);
      }
    } finally {
      await Promise.allSettled([
        source.reader.close(),
        source.admin.close(),
        target.reader.close(),
        target.admin.close(),
      ]);
    }
    return problems;
  }
}

const WARM_UP_MS = 120_000;

function difference(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([op, n]) => [op, n - (before[op] ?? 0)]));
}

const PROVENANCE_HEADER = Buffer.from("kafka-mirror.provenance");
const round = (x: number) => Math.round(x * 10_000) / 10_000;
