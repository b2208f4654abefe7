/**
 * ClusterAdmin and SourceReader whose calls are retried until the caller's deadline
 * (retryRetryable). For callers that own a deadline and make plain reads: the CLI commands, verify
 * and the lag function. Never hand one to the pump or the worker: they retry themselves, and two
 * layers would stack (ports.ts, "Retries").
 */
import type {
  FetchedBatches,
  FetchedRecords,
  FetchLimits,
  PartitionOffsets,
  TopicInfo,
  TopicPartition,
} from "./model.js";
import type { ClusterAdmin, PartitionIdentity, SourceReader } from "./ports.js";
import { type KafkaRetry, retryRetryable } from "./retry.js";

export function retryingAdmin(admin: ClusterAdmin, retry: KafkaRetry): ClusterAdmin {
  return {
    listTopics: (): Promise<TopicInfo[]> => retryRetryable("listing topics", () => admin.listTopics(), retry),
    // "Already exists" counts as success, so a create whose outcome was lost can be sent again.
    createTopics: (specs): Promise<void> =>
      retryRetryable("creating topics", () => admin.createTopics(specs), retry),
    listOffsets: (topic, partitions): Promise<PartitionOffsets[]> =>
      retryRetryable(`listing offsets of ${topic}`, () => admin.listOffsets(topic, partitions), retry),
    describeTopicConfigs: (topics) =>
      retryRetryable("describing topic configs", () => admin.describeTopicConfigs(topics), retry),
    describeBrokerConfigs: (names) =>
      retryRetryable("describing broker configs", () => admin.describeBrokerConfigs(names), retry),
    // SET is idempotent and a grow to a count already reached is a no-op: both may be sent again.
    alterTopicConfigs: (changes) =>
      retryRetryable("altering topic configs", () => admin.alterTopicConfigs(changes), retry),
    createPartitions: (changes) =>
      retryRetryable("creating partitions", () => admin.createPartitions(changes), retry),
    close: () => admin.close(),
  };
}

export function retryingReader(reader: SourceReader, retry: KafkaRetry): SourceReader {
  const where = (tp: TopicPartition): string => `${tp.topic}/${tp.partition}`;
  return {
    fetch: (tp, offset, limits: FetchLimits): Promise<FetchedRecords> =>
      retryRetryable(`fetching ${where(tp)}`, () => reader.fetch(tp, offset, limits), retry),
    fetchBatches: (tp, offset, limits: FetchLimits): Promise<FetchedBatches> =>
      retryRetryable(`fetching ${where(tp)}`, () => reader.fetchBatches(tp, offset, limits), retry),
    // No request: nothing to retry.
    contentCrc: (batch) => reader.contentCrc(batch),
    describePartition: (tp): Promise<PartitionIdentity> =>
      retryRetryable(`describing ${where(tp)}`, () => reader.describePartition(tp), retry),
    endOffsetForLeaderEpoch: (tp, leaderEpoch): Promise<number> =>
      retryRetryable(
        `reading the end of epoch ${leaderEpoch} of ${where(tp)}`,
        () => reader.endOffsetForLeaderEpoch(tp, leaderEpoch),
        retry,
      ),
    close: () => reader.close(),
  };
}
