/**
 * What a chaos run copies between and stores its leases in (scripts/chaos/run.ts): two 3-broker
 * clusters, librdkafka's mock or real Apache Kafka 4.1.2, with the data topics created on both,
 * and, for kafka-mirror, DynamoDB Local on disk behind the delay proxy.
 */
import { createLeaseTable } from "../../lib/dynamodb/lease-table.js";
import { type DelayProxy, startDelayProxy } from "../../test/helpers/delay-proxy.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../test/helpers/dynamodb-local.js";
import { type MockKafka, startMockKafka } from "../../test/helpers/mock-kafka.js";
import { type RealKafka, startRealKafka } from "../../test/helpers/real-kafka.js";
import type { ChaosKafka } from "./options.js";

export type Clusters =
  | { readonly kind: "mock"; readonly src: MockKafka; readonly dst: MockKafka }
  | { readonly kind: "real"; readonly src: RealKafka; readonly dst: RealKafka };

export interface LeaseStore {
  readonly db: DynamoDbLocal;
  /** In front of DynamoDB Local: the workers talk to it, the driver's own checks do not. */
  readonly proxy: DelayProxy;
}

/** What was started so far, so that a failure half way still stops it (see stopWorld). */
export interface Started {
  clusters: (MockKafka | RealKafka)[];
  db?: DynamoDbLocal;
  proxy?: DelayProxy;
}

/**
 * Six JVMs start on 2 cores at once (and DynamoDB Local's): 3-4 minutes at a load of 10, more
 * than the launcher's 90 s default.
 */
const REAL_START_TIMEOUT_MS = 300_000;

/**
 * Data topics on real Kafka: RF 3 (the launcher's default for 3 brokers) and min.insync.replicas
 * 2 (Kafka's default is 1; the launcher sets 2 only for its internal topics), so an acknowledged
 * write is on two brokers and one broker down never stops the writes.
 */
const REAL_TOPIC_CONFIGS = { "min.insync.replicas": "2" };

export async function startClusters(
  kafka: ChaosKafka,
  topics: readonly string[],
  partitions: number,
  started: Started,
): Promise<Clusters> {
  if (kafka === "mock") {
    const [src, dst] = await startPair(() => startMockKafka({ brokers: 3 }), started);
    for (const topic of topics) {
      await src.createTopic(topic, partitions, 3);
      await dst.createTopic(topic, partitions, 3);
    }
    return { kind: "mock", src, dst };
  }
  const [src, dst] = await startPair(
    () => startRealKafka({ brokers: 3, startTimeoutMs: REAL_START_TIMEOUT_MS }),
    started,
  );
  for (const topic of topics) {
    await src.createTopic(topic, partitions, 3, REAL_TOPIC_CONFIGS);
    await dst.createTopic(topic, partitions, 3, REAL_TOPIC_CONFIGS);
  }
  return { kind: "real", src, dst };
}

/** Source and target started side by side; each noted in `started` as soon as it runs. */
async function startPair<C extends MockKafka | RealKafka>(
  start: () => Promise<C>,
  started: Started,
): Promise<[C, C]> {
  const settled = await Promise.allSettled([start(), start()]);
  for (const s of settled) if (s.status === "fulfilled") started.clusters.push(s.value);
  const [src, dst] = settled;
  if (src.status === "rejected") throw src.reason;
  if (dst.status === "rejected") throw dst.reason;
  return [src.value, dst.value];
}

/** DynamoDB Local on `dbPath` (so a restart keeps the leases), the lease table, the proxy. */
export async function startLeaseStore(dbPath: string, table: string, started: Started): Promise<LeaseStore> {
  const db = await startDynamoDbLocal({ dbPath });
  started.db = db;
  const proxy = await startDelayProxy({ upstreamPort: db.port });
  started.proxy = proxy;
  const setupClient = db.client();
  try {
    await createLeaseTable(setupClient, table);
  } finally {
    setupClient.destroy();
  }
  return { db, proxy };
}

export async function stopWorld(started: Started): Promise<void> {
  await Promise.allSettled([
    started.proxy?.stop(),
    ...started.clusters.map((c) => c.stop()),
    started.db?.stop(),
  ]);
}
