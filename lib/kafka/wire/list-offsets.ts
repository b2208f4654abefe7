/** Log start and high watermark of partitions, asked of each partition's leader (one attempt). */
import type { PartitionOffsets } from "../../core/model.js";
import { ReplicatorError } from "../../errors.js";
import type { KafkaClusterClient } from "./cluster-client.js";
import { brokerRequests } from "./kafkajs-internals.js";

const EARLIEST = -2;
const LATEST = -1;
const READ_UNCOMMITTED = 0;

export async function listPartitionOffsets(
  client: KafkaClusterClient,
  topic: string,
  partitions: readonly number[],
): Promise<PartitionOffsets[]> {
  const byLeader = await client.leadersOf(topic, partitions);
  const result = new Map<number, PartitionOffsets>();
  await Promise.all(
    [...byLeader].map(async ([leader, ids]) => {
      const broker = await client.broker(leader);
      const ask = async (timestamp: number) => {
        // READ_UNCOMMITTED: "latest" is then the high watermark, not the last stable offset.
        const response = await brokerRequests.listOffsets(broker, {
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
              details: { topic, partition, broker: leader },
            },
          );
        }
        result.set(partition, { partition, logStartOffset, logEndOffset });
      }
    }),
  );
  return partitions.map((p) => result.get(p) as PartitionOffsets);
}
