/**
 * What a comparison of one partition with its copy reports, in either target.copy mode
 * (compare-partition.ts compares records, compare-batches.ts batches): one shape, so verify's
 * summary reads the same.
 */
import type { TopicPartition } from "../core/model.js";
import type { ClusterAdmin, SourceReader } from "../core/ports.js";

/**
 * One cluster's reader and admin. Verify makes no retries of its own: pass retrying ones
 * (retryingAdmin, retryingReader, with the command's deadline) so a broker that blinks does not
 * fail the comparison; each adapter call is a single attempt.
 */
export interface ClusterSide {
  readonly reader: SourceReader;
  readonly admin: ClusterAdmin;
}

export type MismatchKind = "altered" | "missing" | "duplicated" | "extra";

export interface Mismatch {
  readonly kind: MismatchKind;
  /** Offset of the source record (batches mode: batch) concerned, or null when the source has none there. */
  readonly sourceOffset: number | null;
  /** Offset of the target record (batches mode: batch) concerned, or null when the target has none there. */
  readonly targetOffset: number | null;
  readonly message: string;
}

export interface OffsetRange {
  /** First offset compared. */
  readonly from: number;
  /** One past the last offset compared (the log end when the comparison started). */
  readonly to: number;
}

export interface PartitionComparison {
  readonly source: TopicPartition;
  readonly target: TopicPartition;
  readonly sourceRange: OffsetRange;
  readonly targetRange: OffsetRange;
  readonly sourceRecords: number;
  readonly targetRecords: number;
  readonly sourceDigest: string;
  readonly targetDigest: string;
  /** The first difference, or null when both sides hold the same records in the same order. */
  readonly mismatch: Mismatch | null;
}
