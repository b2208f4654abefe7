/**
 * The bench's checks of a copy: record counts from the offsets, and per-partition digests of
 * everything a copy must keep (data.ts). Read through our own reader and admin, each call retried
 * for a minute: one attempt per call is the adapters' rule (lib/core/ports.ts, "Retries").
 */
import { systemClock } from "../../lib/core/clock.js";
import type { KafkaRetry } from "../../lib/core/retry.js";
import { retryingAdmin, retryingReader } from "../../lib/core/retrying-ports.js";
import { KafkaClusterAdmin } from "../../lib/kafka/admin/cluster-admin.js";
import { KafkaPartitionReader } from "../../lib/kafka/read/source-reader.js";
import { batchCursor } from "../../lib/verify/partition-cursor.js";
import { digestPartition, type PartitionDigest } from "./data.js";

/** A cluster to read: the mock's and the real test bed's clusters both are one. */
export interface BenchCluster {
  readonly bootstrapServers: string[];
}

export function benchRetry(): KafkaRetry {
  return { clock: systemClock, deadline: () => Date.now() + 60_000 };
}

/** Records between log start and high watermark, summed over the partitions (a non-transactional copy's count). */
export async function countRecords(
  cluster: BenchCluster,
  topic: string,
  partitions: number,
): Promise<number> {
  const admin = retryingAdmin(
    new KafkaClusterAdmin({ brokers: cluster.bootstrapServers, clientId: "bench-admin" }),
    benchRetry(),
  );
  try {
    const offsets = await admin.listOffsets(
      topic,
      Array.from({ length: partitions }, (_, p) => p),
    );
    return offsets.reduce((sum, o) => sum + o.logEndOffset - o.logStartOffset, 0);
  } finally {
    await admin.close();
  }
}

export async function digestTopic(
  cluster: BenchCluster,
  topic: string,
  partitions: number,
): Promise<PartitionDigest[]> {
  const reader = retryingReader(
    new KafkaPartitionReader({ brokers: cluster.bootstrapServers, clientId: "bench-verify" }),
    benchRetry(),
  );
  const admin = retryingAdmin(
    new KafkaClusterAdmin({ brokers: cluster.bootstrapServers, clientId: "bench-verify" }),
    benchRetry(),
  );
  try {
    const digests: PartitionDigest[] = [];
    for (let partition = 0; partition < partitions; partition++) {
      digests.push(await digestPartition(reader, admin, { topic, partition }));
    }
    return digests;
  } finally {
    await Promise.allSettled([reader.close(), admin.close()]);
  }
}

/** The bytes of `topic`'s record batches as the brokers hold them (committed data batches). */
export async function storedBytes(cluster: BenchCluster, topic: string, partitions: number): Promise<number> {
  const reader = retryingReader(
    new KafkaPartitionReader({ brokers: cluster.bootstrapServers, clientId: "bench-verify" }),
    benchRetry(),
  );
  let bytes = 0;
  try {
    for (let partition = 0; partition < partitions; partition++) {
      // To the end the reader reaches: the cursor stops where a fetch no longer moves.
      const cursor = batchCursor(reader, { topic, partition }, { from: 0, to: Number.MAX_SAFE_INTEGER });
      for (let batch = await cursor.next(); batch !== undefined; batch = await cursor.next())
        bytes += batch.bytes.length;
    }
    return bytes;
  } finally {
    await reader.close();
  }
}

/** Every partition holds the same records (count and digest), and all of them: `records` in total. */
export function sameCopy(
  source: readonly PartitionDigest[],
  target: readonly PartitionDigest[],
  records: number,
): boolean {
  const copied = target.reduce((sum, d) => sum + d.records, 0);
  return (
    copied === records &&
    source.every(
      (d, i) => d.records > 0 && d.sha256 === target[i]?.sha256 && d.records === target[i]?.records,
    )
  );
}
