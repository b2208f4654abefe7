/**
 * A ClusterAdmin or SourceReader (ours, not kafkajs) whose first calls fail with a retryable
 * KAFKA_RETRIABLE, as a broker that is briefly unavailable makes one attempt of the adapter fail,
 * or with the error a test gives (a refusal that no retry can change).
 */
import type { ClusterAdmin, SourceReader } from "../../lib/core/ports.js";
import { ReplicatorError } from "../../lib/errors.js";

export interface Flaky {
  /** Calls that failed so far, by method. */
  readonly failed: Map<string, number>;
}

export interface FlakyOptions {
  /** Failures per method before calls pass. @default 1 */
  readonly failures?: number;
  /** Which methods fail. @default all of them */
  readonly methods?: readonly string[];
  /** What a failing call throws. @default a retryable KAFKA_RETRIABLE naming the method */
  readonly error?: (method: string) => Error;
}

function failing(method: string, options: FlakyOptions, flaky: Flaky): void {
  if (options.methods !== undefined && !options.methods.includes(method)) return;
  const n = flaky.failed.get(method) ?? 0;
  if (n >= (options.failures ?? 1)) return;
  flaky.failed.set(method, n + 1);
  throw (
    options.error?.(method) ??
    new ReplicatorError("KAFKA_RETRIABLE", `${method}: broker briefly unavailable (injected)`)
  );
}

/** `admin` with the first calls of its methods failing (see FlakyOptions). */
export function flakyAdmin(admin: ClusterAdmin, failures: FlakyOptions = {}): ClusterAdmin & Flaky {
  const flaky: Flaky = { failed: new Map() };
  return {
    ...flaky,
    listTopics: async () => {
      failing("listTopics", failures, flaky);
      return admin.listTopics();
    },
    createTopics: async (specs) => {
      failing("createTopics", failures, flaky);
      return admin.createTopics(specs);
    },
    listOffsets: async (topic, partitions) => {
      failing("listOffsets", failures, flaky);
      return admin.listOffsets(topic, partitions);
    },
    describeTopicConfigs: async (topics) => {
      failing("describeTopicConfigs", failures, flaky);
      return admin.describeTopicConfigs(topics);
    },
    describeBrokerConfigs: async (names) => {
      failing("describeBrokerConfigs", failures, flaky);
      return admin.describeBrokerConfigs(names);
    },
    alterTopicConfigs: async (changes) => {
      failing("alterTopicConfigs", failures, flaky);
      return admin.alterTopicConfigs(changes);
    },
    createPartitions: async (changes) => {
      failing("createPartitions", failures, flaky);
      return admin.createPartitions(changes);
    },
    close: () => admin.close(),
  };
}

/** `reader` with the first fetches failing (see FlakyOptions). */
export function flakyReader(reader: SourceReader, failures: FlakyOptions = {}): SourceReader & Flaky {
  const flaky: Flaky = { failed: new Map() };
  return {
    ...flaky,
    fetch: async (tp, offset, limits) => {
      failing("fetch", failures, flaky);
      return reader.fetch(tp, offset, limits);
    },
    fetchBatches: async (tp, offset, limits) => {
      failing("fetch", failures, flaky);
      return reader.fetchBatches(tp, offset, limits);
    },
    contentCrc: (batch) => reader.contentCrc(batch),
    describePartition: (tp) => reader.describePartition(tp),
    endOffsetForLeaderEpoch: (tp, epoch) => reader.endOffsetForLeaderEpoch(tp, epoch),
    close: () => reader.close(),
  };
}
