/**
 * What consumer-group offset translation takes and gives, in either target.copy mode: records
 * (translate.ts, by provenance headers) and batches (translate-batches.ts, by matching our copies
 * to the source's batches). Shared here so the two files need not import each other.
 */
import type { TopicPartition } from "../core/model.js";
import type { ClusterAdmin, OffsetMapPoint, SourceReader } from "../core/ports.js";
import type { KafkaRetry } from "../core/retry.js";

/** How either mode reads the target. */
export interface TargetScanDeps {
  /** A READ_COMMITTED reader of the TARGET cluster (retried by the caller's deadline). */
  readonly reader: SourceReader;
  /** Admin of the TARGET cluster. */
  readonly admin: ClusterAdmin;
  /**
   * The caller's deadline, which also bounds each wait for an open transaction on the target to
   * end. Only that wait is retried here: the reader and admin retry their own failures.
   */
  readonly retry: KafkaRetry;
}

/** target.copy "records": copies are told by their provenance header. */
export interface RecordsTranslateDeps extends TargetScanDeps {
  /** @default "records" */
  readonly copy?: "records";
  /** Provenance header key and the alias this mirror stamps. */
  readonly header: Buffer;
  readonly sourceAlias: string;
}

/** target.copy "batches": copies carry no header; they are matched to the source's batches. */
export interface BatchesTranslateDeps extends TargetScanDeps {
  readonly copy: "batches";
  /** A reader of the SOURCE cluster (retried by the caller's deadline). */
  readonly source: SourceReader;
}

export type TranslateDeps = RecordsTranslateDeps | BatchesTranslateDeps;

export interface TranslationRequest {
  /** The source partition; its number is what provenance names. */
  readonly source: TopicPartition;
  /** Where its copies land. */
  readonly target: TopicPartition;
  /** The lease's offset map (leaseMap(lease)). */
  readonly map: readonly OffsetMapPoint[];
  /** The group's committed source offset: the next record it would read. */
  readonly sourceOffset: number;
  /**
   * Batches mode: the producer id every copy of ours past the map's points carries, when the
   * caller knows it for certain; absent, it is learnt from the target (translate-batches.ts
   * says what each way can and cannot tell).
   */
  readonly producerId?: bigint;
}

export interface Translation {
  /** Where the group reads the target from. */
  readonly targetOffset: number;
  /** Source offset of the copy at `targetOffset`; null when nothing at or after O is copied yet. */
  readonly nextSourceOffset: number | null;
  /** One past the highest source offset seen copied (a lower bound); null when none was seen. */
  readonly copiedTo: number | null;
  /** Target records read. */
  readonly scanned: number;
}
