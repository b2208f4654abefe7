/**
 * What a chaos run copies between and stores its leases in (scripts/chaos/run.ts): two clusters,
 * librdkafka's mock or real Apache Kafka 4.1.2, started by test/helpers/kafka-testbed.ts (the one
 * way a test starts a cluster), with the data topics created on both, and, for kafka-mirror,
 * DynamoDB Local on disk behind the delay proxy.
 */
import { createLeaseTable } from "../../lib/dynamodb/lease-table.js";
import { type DelayProxy, startDelayProxy } from "../../test/helpers/delay-proxy.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../test/helpers/dynamodb-local.js";
import { startTestKafka, type TestKafka } from "../../test/helpers/kafka-testbed.js";
import type { MockKafka } from "../../test/helpers/mock-kafka.js";
import type { RealKafka } from "../../test/helpers/real-kafka.js";
import type { ChaosOptions } from "./options.js";

/** Both clusters, seen as what they are: the fault loops reach the mock's or real Kafka's own API. */
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
  clusters: TestKafka[];
  db?: DynamoDbLocal;
  proxy?: DelayProxy;
}

/**
 * Six JVMs start on 2 cores at once (and DynamoDB Local's): 3-4 minutes at a load of 10, more
 * than the launcher's 90 s default.
 */
const REAL_START_TIMEOUT_MS = 300_000;

/**
 * Data topics on a 3-broker real cluster: RF 3 and min.insync.replicas 2 (Kafka's default is 1;
 * the launcher sets 2 only for its internal topics), so an acknowledged write is on two brokers
 * and one broker down never stops the writes. The mock has no such setting.
 */
function topicConfigs(kind: TestKafka["kind"], brokers: 1 | 3): Record<string, string> | undefined {
  return kind === "real" && brokers === 3 ? { "min.insync.replicas": "2" } : undefined;
}

export async function startClusters(
  o: Pick<ChaosOptions, "kafka" | "brokers" | "partitions">,
  topics: readonly string[],
  started: Started,
): Promise<Clusters> {
  if (o.kafka === "mock" && (o.brokers.source !== 3 || o.brokers.target !== 3)) {
    throw new Error("the mock's broker faults and leader moves need 3 brokers on both clusters");
  }
  const start = (brokers: 1 | 3) =>
    startTestKafka({ brokers, kind: o.kafka, startTimeoutMs: REAL_START_TIMEOUT_MS });
  const [src, dst] = await startPair(start(o.brokers.source), start(o.brokers.target), started);
  for (const topic of topics) {
    await src.createTopic(topic, o.partitions, o.brokers.source, topicConfigs(src.kind, o.brokers.source));
    await dst.createTopic(topic, o.partitions, o.brokers.target, topicConfigs(dst.kind, o.brokers.target));
  }
  if (src.kind === "mock" && dst.kind === "mock") return { kind: "mock", src: src.mock, dst: dst.mock };
  if (src.kind === "real" && dst.kind === "real") return { kind: "real", src: src.real, dst: dst.real };
  throw new Error("source and target must be the same kind of cluster");
}

/** Source and target started side by side; each noted in `started` as soon as it runs. */
async function startPair(
  src: Promise<TestKafka>,
  dst: Promise<TestKafka>,
  started: Started,
): Promise<[TestKafka, TestKafka]> {
  const settled = await Promise.allSettled([src, dst]);
  for (const s of settled) if (s.status === "fulfilled") started.clusters.push(s.value);
  const [s, d] = settled;
  if (s.status === "rejected") throw s.reason;
  if (d.status === "rejected") throw d.reason;
  return [s.value, d.value];
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
