/**
 * One lag measurement over the source cluster and the lease table: discovers selected topics
 * (creating lease items for new ones, so they start replicating at the next tick), reads log
 * offsets and leases, and dates the oldest record not yet copied of every lagging partition.
 * Partitions that no worker holds are measured like the others. Kafka calls are retried until
 * `retry.deadline` (the adapters make one attempt each, ports.ts "Retries").
 */
import { partitionKey, type TopicPartition } from "../core/model.js";
import type { ClusterAdmin, Lease, LeaseStore, Logger, SourceReader, TopicMapping } from "../core/ports.js";
import type { KafkaRetry } from "../core/retry.js";
import { retryingAdmin, retryingReader } from "../core/retrying-ports.js";
import {
  type LagReport,
  lagReport,
  nextOffsetToCopy,
  type PartitionLagInput,
  partitionLag,
} from "./lag-report.js";

export interface LagMonitorOptions {
  readonly sourceAdmin: ClusterAdmin;
  readonly source: SourceReader;
  readonly leases: LeaseStore;
  readonly mapping: TopicMapping;
  readonly logger: Logger;
  readonly startFrom: "earliest" | "latest";
  /** Lag > 0 without progress for this long counts as stalled. */
  readonly stallAfterMs: number;
  readonly now?: () => number;
  /** The measurement's own deadline: the invocation's remaining time less a margin. */
  readonly retry: KafkaRetry;
}

/** How many partitions are dated at once; the reader coalesces them per leader broker. */
const DATING_CONCURRENCY = 32;

export interface LagMeasurement {
  readonly report: LagReport;
  /** Selected partitions that had no lease item before this measurement. */
  readonly discovered: readonly TopicPartition[];
}

export async function measureLag(options: LagMonitorOptions): Promise<LagMeasurement> {
  const { leases, mapping } = options;
  const sourceAdmin = retryingAdmin(options.sourceAdmin, options.retry);
  const now = options.now ?? Date.now;
  const topics = (await sourceAdmin.listTopics()).filter((t) => mapping.isSelected(t.name));
  const selected = topics.flatMap((t) =>
    Array.from({ length: t.partitions }, (_, partition) => ({ topic: t.name, partition })),
  );

  const before = keyed(await leases.list());
  const discovered = selected.filter((tp) => !before.has(partitionKey(tp)));
  if (discovered.length > 0) await leases.ensure(discovered);
  const leaseByKey = discovered.length > 0 ? keyed(await leases.list()) : before;

  const inputs: PartitionLagInput[] = [];
  for (const topic of topics) {
    const offsets = await sourceAdmin.listOffsets(
      topic.name,
      Array.from({ length: topic.partitions }, (_, p) => p),
    );
    for (const o of offsets) {
      const lease = leaseByKey.get(partitionKey({ topic: topic.name, partition: o.partition }));
      inputs.push({
        topic: topic.name,
        partition: o.partition,
        offsets: o,
        ...(lease === undefined ? {} : { lease }),
        startFrom: options.startFrom,
      });
    }
  }

  const dated = await datePending(inputs, {
    ...options,
    source: retryingReader(options.source, options.retry),
  });
  const at = now();
  const report = lagReport(dated.map((input) => partitionLag(input, at, options.stallAfterMs)));
  return { report, discovered };
}

/** Reads the first pending record of each lagging partition for its timestamp. */
async function datePending(
  inputs: readonly PartitionLagInput[],
  options: LagMonitorOptions,
): Promise<PartitionLagInput[]> {
  const out: PartitionLagInput[] = [...inputs];
  for (let start = 0; start < out.length; start += DATING_CONCURRENCY) {
    await Promise.all(
      out.slice(start, start + DATING_CONCURRENCY).map(async (input, i) => {
        const from = nextOffsetToCopy(input);
        if (from >= input.offsets.logEndOffset) return;
        try {
          const fetched = await options.source.fetch(input, from, {
            maxRecords: 1,
            maxBytes: 1024,
            maxWaitMs: 0,
          });
          const first = fetched.records[0];
          // A magic-0 record has no timestamp (-1): dating by it would report decades of lag.
          if (first !== undefined && first.timestamp >= 0)
            out[start + i] = { ...input, oldestPendingTimestamp: first.timestamp };
        } catch (error) {
          // Lag in seconds falls back to the time since the last progress.
          options.logger.warn("dating pending records failed", {
            topic: input.topic,
            partition: input.partition,
            error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
          });
        }
      }),
    );
  }
  return out;
}

function keyed(leases: readonly Lease[]): Map<string, Lease> {
  return new Map(leases.map((l) => [partitionKey(l), l]));
}
