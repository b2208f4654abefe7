/** Log start and high watermark of partitions, asked of each partition's leader. */
import type { PartitionOffsets } from "../core/model.js";
import { ReplicatorError } from "../errors.js";
import type { KafkajsCluster } from "./kafkajs-internals.js";

const EARLIEST = -2;
const LATEST = -1;
const READ_UNCOMMITTED = 0;

export async function listPartitionOffsets(
  cluster: KafkajsCluster,
  topic: string,
  partitions: readonly number[],
): Promise<PartitionOffsets[]> {
  await cluster.addMultipleTargetTopics([topic]);
  const known = new Set(cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId));
  const unknown = partitions.filter((p) => !known.has(p));
  if (unknown.length > 0) {
    throw new ReplicatorError("KAFKA_RETRIABLE", `topic ${topic} has no partition(s) ${unknown.join(", ")}`, {
      details: { topic, partitions: unknown },
    });
  }
  const byLeader = cluster.findLeaderForPartitions(topic, [...partitions]);
  const result = new Map<number, PartitionOffsets>();
  await Promise.all(
    Object.entries(byLeader).map(async ([leader, ids]) => {
      const broker = await cluster.findBroker({ nodeId: Number(leader) });
      const ask = async (timestamp: number) => {
        // READ_UNCOMMITTED: "latest" is then the high watermark, not the last stable offset.
        const response = await broker.listOffsets({
          isolationLevel: READ_UNCOMMITTED,
          topics: [{ topic, partitions: ids.map((partition) => ({ partition, timestamp })) }],
        });
        const offsets = new Map<number, number>();
        for (const t of response.responses) {
          for (const p of t.partitions) offsets.set(p.partition, Number(p.offset));
        }
        return offsets;
      };
      // One partition may appear only once per request, hence two requests.
      const [earliest, latest] = await Promise.all([ask(EARLIEST), ask(LATEST)]);
      for (const partition of ids) {
        const logStartOffset = earliest.get(partition);
        const logEndOffset = latest.get(partition);
        if (logStartOffset === undefined || logEndOffset === undefined) {
          throw new ReplicatorError(
            "KAFKA_RETRIABLE",
            `ListOffsets for ${topic}/${partition} had no answer`,
            {
              details: { topic, partition, broker: Number(leader) },
            },
          );
        }
        result.set(partition, { partition, logStartOffset, logEndOffset });
      }
    }),
  );
  return partitions.map((p) => result.get(p) as PartitionOffsets);
}
