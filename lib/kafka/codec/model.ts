/**
 * The shared types of the record codec (codec/): a decoded batch, v2 or a legacy (magic 0/1)
 * message, as both decoders return it and the reader consumes it.
 */
import type { MirrorRecord } from "../../core/model.js";

/** What a control batch marks: the end of a transaction, or another marker (leader change, ...). */
export type ControlType = "abort" | "commit" | "other";

export interface DecodedBatch {
  baseOffset: number;
  /** baseOffset + lastOffsetDelta: the batch covers offsets up to here, compaction gaps included. */
  lastOffset: number;
  /** partitionLeaderEpoch: the epoch of the leader that appended the batch; -1 for magic 0/1. */
  leaderEpoch: number;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  isTransactional: boolean;
  isControl: boolean;
  /** Control batches only: the marker type, which dropAborted needs. null for data batches. */
  controlType: ControlType | null;
  /** Data records with absolute offsets; [] for control batches. */
  records: MirrorRecord[];
  /** Bytes of this batch on the wire. */
  sizeInBytes: number;
}
