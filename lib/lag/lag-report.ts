/**
 * Replication lag, computed from a partition's lease (its checkpoint and last progress) and the
 * source's offsets. Pure: the lag monitor gathers the inputs over our ports.
 */
import type { PartitionOffsets } from "../core/model.js";
import type { Lease } from "../core/ports.js";

export interface PartitionLagInput {
  readonly topic: string;
  readonly partition: number;
  readonly offsets: PartitionOffsets;
  /** Absent when no lease item exists yet (a topic discovered in this run). */
  readonly lease?: Lease;
  /** Timestamp of the oldest record not yet copied, when it could be read. */
  readonly oldestPendingTimestamp?: number;
  /** Where a partition without a checkpoint starts. */
  readonly startFrom: "earliest" | "latest";
}

export interface PartitionLag {
  readonly topic: string;
  readonly partition: number;
  /** Records in the source not yet copied: log end minus the next offset to copy. */
  readonly lagRecords: number;
  /** Age of the oldest record not yet copied, else time since the last progress; 0 when caught up. */
  readonly lagSeconds: number;
  /** Whether a worker holds the lease right now. */
  readonly owned: boolean;
  /** Lag > 0 and no progress for longer than the stall window. */
  readonly stalled: boolean;
}

export interface TopicLag {
  readonly topic: string;
  /** Sum over the topic's partitions. */
  readonly lagRecords: number;
  /** Maximum over the topic's partitions. */
  readonly lagSeconds: number;
  readonly stalledPartitions: number;
}

export interface LagReport {
  readonly partitions: readonly PartitionLag[];
  readonly topics: readonly TopicLag[];
  readonly maxLagRecords: number;
  readonly maxLagSeconds: number;
  readonly stalledPartitions: number;
}

/** The offset the next copy of this partition starts at, as the worker would choose it. */
export function nextOffsetToCopy(input: PartitionLagInput): number {
  const { offsets, lease, startFrom } = input;
  const checkpoint = lease?.checkpoint ?? null;
  if (checkpoint === null) return startFrom === "latest" ? offsets.logEndOffset : offsets.logStartOffset;
  // Below the log start the records are gone (reported as lost by the worker); what is left to
  // copy starts at the log start.
  return Math.max(checkpoint, offsets.logStartOffset);
}

export function partitionLag(input: PartitionLagInput, now: number, stallAfterMs: number): PartitionLag {
  const lagRecords = Math.max(0, input.offsets.logEndOffset - nextOffsetToCopy(input));
  const lease = input.lease;
  const owned = lease !== undefined && lease.owner !== null && lease.expiresAt > now;
  let lagMs = 0;
  let sinceProgressMs = 0;
  if (lagRecords > 0) {
    const progressAt = lease?.lastProgressAt ?? null;
    const pendingAt = input.oldestPendingTimestamp;
    lagMs = pendingAt !== undefined ? now - pendingAt : progressAt !== null ? now - progressAt : 0;
    sinceProgressMs = progressAt !== null ? now - progressAt : lagMs;
  }
  return {
    topic: input.topic,
    partition: input.partition,
    lagRecords,
    lagSeconds: Math.max(0, Math.floor(lagMs / 1000)),
    owned,
    stalled: lagRecords > 0 && sinceProgressMs > stallAfterMs,
  };
}

export function lagReport(partitions: readonly PartitionLag[]): LagReport {
  const byTopic = new Map<string, { lagRecords: number; lagSeconds: number; stalledPartitions: number }>();
  for (const p of partitions) {
    const t = byTopic.get(p.topic) ?? { lagRecords: 0, lagSeconds: 0, stalledPartitions: 0 };
    t.lagRecords += p.lagRecords;
    t.lagSeconds = Math.max(t.lagSeconds, p.lagSeconds);
    t.stalledPartitions += p.stalled ? 1 : 0;
    byTopic.set(p.topic, t);
  }
  const topics = [...byTopic.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([topic, t]) => ({ topic, ...t }));
  return {
    partitions,
    topics,
    maxLagRecords: Math.max(0, ...topics.map((t) => t.lagRecords)),
    maxLagSeconds: Math.max(0, ...topics.map((t) => t.lagSeconds)),
    stalledPartitions: topics.reduce((n, t) => n + t.stalledPartitions, 0),
  };
}
