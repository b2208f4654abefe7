/**
 * What of ours already sits in one target partition, learnt from the provenance headers of its
 * tail. This is how exactly-once survives crashes without broker de-duplication:
 *
 *   invariant: with every checkpoint C the lease stores a target position T such that every
 *   record copied from source offset C onwards, wherever it landed, sits at or after T.
 *
 * Writes to a target partition are sequential and fenced by the lease, so the target end
 * observed right after a write was acknowledged (or any offset before it) is such a T for the
 * checkpoint of that write. A holder taking over reads the target from T to its end, finds the
 * highest source offset of this partition that landed, and resumes after it. After a write that
 * did not end in an acknowledgement (timeout, broken connection, retries exhausted) it looks at the
 * target end again before the next write: when it grew past what this holder knows about (an
 * attempt of the uncertain write landed, in whole or in part), the new records are read and
 * whatever of ours they contain is not written again. While every write is acknowledged there is
 * nothing to look for: this holder's writes are the only ones from this source partition (the
 * lease fences the others, and a former holder's last write ended before its lease ran out, see
 * PumpSettings.writeSafetyMarginMs), so the look, a ListOffsets round trip, is skipped.
 *
 * target.copy "batches" writes no provenance. With fenced writes the same invariant tells what
 * landed all the same: each write is one transaction, committed whole (or its acknowledged
 * prefix, when cut at its deadline) or not at all, and after the fence nothing of an earlier
 * holder's can still commit. So the committed batches of our producer ids (the writer's, and
 * the earlier ones the lease lists: Lease.producerIds) past the position are copies, one to one
 * and in order, of the source batches from the checkpoint on; the look notes them (`found`) and
 * `pending` matches them to the source batches the pump holds, by record count and content CRC
 * (SourceReader.contentCrc, which leaves out what a copy rewrites): on a mismatch the source
 * changed under the copy, and the partition stops rather than guess.
 *
 * The target is read READ_COMMITTED, up to an end fixed when the look starts (target-read.ts):
 * the high watermark then, as nothing of ours can land later without a new writeFailed. It may
 * not stop at the last stable offset: an uncertain write of ours may sit beyond it, and missing
 * it would copy it twice. While an open transaction holds the LSO below that end the look fails
 * retryably (TARGET_TRANSACTION_OPEN), and the next one goes on from where it got to, towards
 * the same end.
 */
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import {
  type CopyUnits,
  type FetchLimits,
  type FetchProgress,
  isBatches,
  type SourceBatch,
  type TopicPartition,
} from "../model.js";
import type { ClusterAdmin, Logger, ReplicationMetrics, SourceReader } from "../ports.js";
import { lastProvenance, type ProvenanceSettings } from "../provenance.js";
import { sliceUnits, unitsAfter } from "./copy-units.js";
import { fetchTowards, targetBounds } from "./target-read.js";

export interface TargetTailDeps {
  /** A reader of the TARGET cluster. */
  readonly reader: SourceReader;
  /** Admin of the TARGET cluster. */
  readonly admin: ClusterAdmin;
  readonly logger: Logger;
  readonly metrics?: Pick<ReplicationMetrics, "otherWriterSeen">;
}

/** How the tail tells our copies in the target: by provenance, or (batches) by producer id and content. */
export type TailMode =
  | { readonly copy: "records"; readonly provenance: ProvenanceSettings }
  /** By the writer's producer id (known once fenced) and earlier ones the lease lists (Lease.producerIds). */
  | BatchesMode;

type BatchesMode = { copy: "batches"; producerId: () => bigint | null; stored: () => readonly bigint[] };

/** A committed batch of ours past the position, not yet matched to the source batch it copies. */
interface FoundCopy {
  readonly count: number;
  readonly contentCrc: number;
  /** Where it begins in the target. */
  readonly targetOffset: number;
}

export class TargetTail {
  readonly #deps: TargetTailDeps;
  readonly #source: TopicPartition;
  readonly #target: TopicPartition;
  readonly #mode: TailMode;
  /** Batches mode: copies of ours the last looks found, oldest first, not matched yet. */
  #found: FoundCopy[] = [];
  #otherWriterSeen = false;
  /** Everything before this target offset has been accounted for. Null until the first look. */
  #position: number | null;
  /** Highest source offset of our partition known to be in the target; -1 when none is known. */
  #landed = -1;
  /** Something of ours may have landed that this view does not know of: look before writing. */
  #uncertain = true;
  /** The end the pending look must reach (see above); null when no look is under way. */
  #goal: number | null = null;
  readonly #fenced: boolean;

  constructor(
    deps: TargetTailDeps,
    source: TopicPartition,
    target: TopicPartition,
    mode: TailMode,
    /** The lease's stored target position, or null when it has none. */
    from: number | null,
    /** TargetWriter.fences: our writes are transactions, earlier holders fenced. */
    fenced = false,
  ) {
    this.#fenced = fenced;
    this.#deps = deps;
    this.#source = source;
    this.#target = target;
    this.#mode = mode;
    this.#position = from;
  }

  /**
   * The target position to store with a checkpoint taken now. Null before the first look. In
   * batches mode, while copies found are not matched yet, where the first of them begins: the
   * checkpoint (after what was matched) must not skip them for the next holder.
   */
  get position(): number | null {
    return this.#found[0]?.targetOffset ?? this.#position;
  }

  /** Batches mode: the producer id our writes carry since the last fence; else null. */
  get producerId(): bigint | null {
    return this.#mode.copy === "batches" ? this.#mode.producerId() : null;
  }

  /** Highest source offset of this partition seen in the target (-1 when none). */
  get landed(): number {
    return this.#landed;
  }

  /** Batches mode: records of the copies the looks found that are not matched to source batches yet. */
  get unmatchedRecords(): number {
    return this.#found.reduce((n, f) => n + f.count, 0);
  }

  /** True until the first look, and after a write whose outcome is unknown. */
  get uncertain(): boolean {
    return this.#uncertain;
  }

  /**
   * The source log diverged and the checkpoint was reset (source-continuity.ts): its offsets are
   * reused by different records, so provenance read before `position` (the target end when the
   * reset was stored) says nothing about them. Forget it and look only from there.
   */
  restartAt(position: number): void {
    this.#position = position;
    this.#landed = -1;
    this.#found = [];
    this.#uncertain = true;
  }

  /**
   * Of the pump's next `units` (in order, from where the position's checkpoint is), those not in
   * the target yet. Batches mode: the first ones must be the copies found, one to one.
   */
  async pending(units: CopyUnits): Promise<CopyUnits> {
    const left = unitsAfter(units, this.#landed);
    if (!isBatches(left)) return left;
    let matched = 0;
    for (const batch of left) {
      const found = this.#found[0];
      if (found === undefined) break;
      // Asked first: the reader may check the batch's CRC here, so a batch corrupted on its way
      // is told as such rather than by a count its header got wrong.
      const contentCrc = await this.#deps.reader.contentCrc(batch);
      if (found.count !== batch.count || found.contentCrc !== contentCrc) throw this.#mismatch(found, batch);
      this.#found.shift();
      this.#landed = batch.lastOffset;
      matched++;
    }
    if (matched > 0) {
      this.#deps.logger.info(
        "records of an unfinished write found in the target as copies; not written again",
        {
          ...this.#fields(),
          through: this.#landed,
          batches: matched,
        },
      );
    }
    return sliceUnits(left, matched);
  }

  /** The target partition's current end (high watermark). */
  async targetEnd(): Promise<number> {
    return (await this.#end()).logEndOffset;
  }

  /** A write failed without an acknowledgement: some or all of it may have landed all the same. */
  writeFailed(): void {
    this.#uncertain = true;
    // This write may land beyond an end fixed earlier: the next look lists a new one.
    this.#goal = null;
  }

  /** Brings the view up to the target's end (adopted if no position is stored); returns records read. */
  async refresh(): Promise<number> {
    const end = await this.#end();
    if (this.#position === null) {
      this.#position = end.logEndOffset;
      this.#uncertain = false;
      this.#goal = null;
      return 0;
    }
    if (end.logEndOffset < this.#position) {
      // The target log is shorter than we knew it (topic re-created, unclean leader election):
      // what was there is gone, so nothing of ours is known to be in it any more.
      this.#deps.logger.warn("target partition shrank below the known position", {
        ...this.#fields(),
        position: this.#position,
        logEndOffset: end.logEndOffset,
      });
      this.#position = end.logEndOffset;
      this.#found = [];
      this.#uncertain = false;
      this.#goal = null;
      return 0;
    }
    // A later, higher end is not needed (see the file comment); a lower one means the log shrank.
    const goal = Math.min(this.#goal ?? end.logEndOffset, end.logEndOffset);
    this.#goal = goal;
    const read = await this.#readTo(Math.max(this.#position, end.logStartOffset), goal);
    this.#position = Math.max(this.#position, goal);
    this.#goal = null;
    // Everything up to the end listed above has been read (a refresh that fails part way leaves
    // the view uncertain). Anything of ours landing later comes from a write that starts after
    // this, or fails and says so through writeFailed.
    this.#uncertain = false;
    return read;
  }

  /** Reads the target from `from` up to `goal`, noting what of ours landed; returns how many records were read. */
  async #readTo(from: number, goal: number): Promise<number> {
    let read = 0;
    let offset = from;
    while (offset < goal) {
      let fetched: { progress: FetchProgress; records: number };
      try {
        fetched = await this.#fetchNoting(offset, goal);
      } catch (error) {
        if (!isReplicatorError(error, "OFFSET_OUT_OF_RANGE")) throw error;
        // Target retention took the start of the range: nothing to learn from what is gone.
        const bounds = await this.#end();
        if (bounds.logStartOffset <= offset) throw error;
        offset = bounds.logStartOffset;
        continue;
      }
      read += fetched.records;
      offset = fetched.progress.nextOffset;
      this.#position = offset;
    }
    return read;
  }

  /** One fetch towards `goal`, noting what of ours it holds; returns how far it got and its records. */
  async #fetchNoting(offset: number, goal: number): Promise<{ progress: FetchProgress; records: number }> {
    const { reader } = this.#deps;
    const mode = this.#mode;
    const target = this.#target;
    if (mode.copy === "batches") {
      const read = (o: number, limits: FetchLimits) => reader.fetchBatches(target, o, limits);
      const fetched = await fetchTowards(read, target, offset, goal, this.#fields());
      await this.#noteCopies(fetched.batches, mode);
      return { progress: fetched, records: fetched.batches.reduce((n, b) => n + b.count, 0) };
    }
    const read = (o: number, limits: FetchLimits) => reader.fetch(target, o, limits);
    const fetched = await fetchTowards(read, target, offset, goal, this.#fields());
    for (const record of fetched.records) {
      const p = lastProvenance(record, mode.provenance.header);
      if (
        p !== null &&
        p.alias === mode.provenance.sourceAlias &&
        p.partition === this.#source.partition &&
        p.offset > this.#landed
      ) {
        this.#landed = p.offset;
      }
    }
    return { progress: fetched, records: fetched.records.length };
  }

  /** Batches mode: our committed batches are copies to match; another producer's are skipped, said once. */
  async #noteCopies(batches: readonly SourceBatch[], mode: BatchesMode): Promise<void> {
    const current = mode.producerId();
    if (current === null) {
      throw new ReplicatorError(
        "CONFIG_INVALID",
        'target.copy "batches" needs fenced writes (target.fencing "transactional"): without them the target cannot say what landed',
        { details: this.#fields() },
      );
    }
    const ours = new Set([...mode.stored(), current]);
    const others = batches.filter((b) => !ours.has(b.producerId));
    const found: FoundCopy[] = []; // all or none: a throw leaves the fetch to be read again
    for (const b of batches.filter((b) => ours.has(b.producerId))) {
      const contentCrc = await this.#deps.reader.contentCrc(b);
      found.push({ count: b.count, contentCrc, targetOffset: b.baseOffset });
    }
    this.#found.push(...found);
    const other = others[0];
    if (other === undefined) return;
    const { topic, partition } = this.#source;
    this.#deps.metrics?.otherWriterSeen?.({
      topic,
      partition,
      targetTopic: this.#target.topic,
      batches: others.length,
    });
    if (this.#otherWriterSeen) return;
    this.#otherWriterSeen = true;
    this.#deps.logger.warn("another producer writes to the target partition; its batches are not ours", {
      ...this.#fields(),
      producerId: String(other.producerId),
      targetOffset: other.baseOffset,
    });
  }

  #mismatch(found: FoundCopy, batch: SourceBatch): ReplicatorError {
    return new ReplicatorError(
      "TARGET_COPY_MISMATCH",
      `target ${this.#target.topic}/${this.#target.partition} holds a copy at offset ${found.targetOffset} ` +
        `(${found.count} records) that is not the source batch at ${this.#source.topic}/${this.#source.partition} ` +
        `offset ${batch.baseOffset} (${batch.count} records): the source changed under the copy (compaction, ` +
        "a re-created topic) or another writer uses our producer; stopping rather than guess what landed",
      {
        details: {
          ...this.#fields(),
          targetOffset: found.targetOffset,
          sourceOffset: batch.baseOffset,
          targetRecords: found.count,
          sourceRecords: batch.count,
        },
      },
    );
  }

  /**
   * Our own write was acknowledged: its records are ours and need no reading back. `baseOffset`
   * is where the first landed (-1 when the writer could not tell); the end advances past them
   * only when it is known, else the next refresh reads them.
   */
  acknowledged(baseOffset: number, count: number, lastSourceOffset: number): void {
    if (baseOffset < 0 && this.#mode.copy === "batches") {
      // Where the copies sit decides what the next holder matches them with: look them up first
      // (the pump sees `uncertain`, and the look finds and matches them).
      this.writeFailed();
      return;
    }
    this.#landed = Math.max(this.#landed, lastSourceOffset);
    if (baseOffset < 0 || this.#position === null || this.#uncertain) return;
    // Without fencing, only when the write starts right where our view ends: records before it
    // that we did not see (an earlier holder's late write) must still be read by the next look.
    // With fencing none can land there, only other producers' records and our commit markers
    // (one after every write): skipping those keeps a successor's look to what came after our
    // last checkpoint, not everything this holder ever wrote.
    if (baseOffset === this.#position || (this.#fenced && baseOffset > this.#position))
      this.#position = baseOffset + count;
  }

  #end(): Promise<{ logStartOffset: number; logEndOffset: number }> {
    return targetBounds(this.#deps.admin, this.#target);
  }

  #fields(): Record<string, unknown> {
    return {
      topic: this.#source.topic,
      partition: this.#source.partition,
      targetTopic: this.#target.topic,
      targetPartition: this.#target.partition,
    };
  }
}
