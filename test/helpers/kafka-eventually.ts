/**
 * Waits for what Kafka makes visible only a moment after it answered a call, on the condition
 * Kafka documents, bounded; never a bare sleep. Two such gaps meet the contract tests on real
 * Kafka (the mock closes both at once):
 * - an admin change (CreateTopics, CreatePartitions, IncrementalAlterConfigs) is answered once the
 *   controller made it; each broker applies it from the metadata log later, and the Metadata and
 *   DescribeConfigs it serves show the old state until then (Kafka's AdminClient: "it may take
 *   several seconds ... for all the brokers to become aware");
 * - a transaction's commit or abort is answered once the coordinator logged the decision; it
 *   writes the COMMIT or ABORT markers to the partitions after answering, and until a partition
 *   has its marker the last stable offset (LSO) stays at the transaction's first record.
 */
import type { TopicPartition } from "../../lib/core/model.js";
import { type ClusterMetadata, latestOffset, metadata } from "./kafka-raw-requests.js";

const POLL_MS = 100;
const TIMEOUT_MS = 15_000;

/**
 * Reads until `shows` accepts the answer, and returns that answer. `shows` should test that the
 * change is visible (a count above the old one), not the claim under test, so a wrong value still
 * fails the test's own assertion with its message. On a cluster of several brokers each read may
 * be served by another broker: one that shows the change says nothing of the others.
 */
export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  shows: (answer: T) => boolean,
  timeoutMs = TIMEOUT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await read();
    if (shows(answer)) return answer;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not shown within ${timeoutMs} ms; last answer: ${describe(answer)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Until the partition's LSO, asked of its leader (ListOffsets read_committed, independently of
 * lib/kafka), is at least `offset`: the markers of the transactions ended below it are written.
 */
export async function stableOffsetReaches(
  brokers: readonly string[],
  tp: TopicPartition,
  offset: number,
  timeoutMs = TIMEOUT_MS,
): Promise<void> {
  await eventually(
    `the last stable offset of ${tp.topic}[${tp.partition}] to reach ${offset}`,
    () => lastStableOffset(brokers, tp),
    (lso) => lso >= offset,
    timeoutMs,
  );
}

async function lastStableOffset(brokers: readonly string[], tp: TopicPartition): Promise<number> {
  const cluster = await metadataOfAny(brokers, tp.topic);
  const leader = cluster.topics.get(tp.topic)?.partitions.find((p) => p.partition === tp.partition)?.leader;
  const node = cluster.brokers.find((b) => b.nodeId === leader);
  if (node === undefined) return -1; // no leader yet: not reached
  return latestOffset(`${node.host}:${node.port}`, tp.topic, tp.partition, "read_committed");
}

/**
 * Metadata from the first of `brokers` that answers. Tests kill and restart brokers (an unclean
 * election in source-divergence.test.ts kills the first one): a dead bootstrap broker is skipped,
 * as a client's bootstrap list is, instead of failing the read with ECONNREFUSED.
 */
async function metadataOfAny(brokers: readonly string[], topic: string): Promise<ClusterMetadata> {
  const failures: string[] = [];
  for (const address of brokers) {
    try {
      return await metadata(address, [topic]);
    } catch (error) {
      failures.push(error instanceof Error ? error.message : String(error));
    }
  }
  throw new Error(`no broker answered Metadata for ${topic}: ${failures.join("; ") || "no broker address"}`);
}

function describe(answer: unknown): string {
  if (answer instanceof Map) return JSON.stringify([...answer].map(([k, v]) => [k, describe(v)]));
  return typeof answer === "object" ? JSON.stringify(answer) : String(answer);
}
