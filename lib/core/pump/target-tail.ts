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
 * The target is read READ_COMMITTED, up to an end fixed when the look starts (target-read.ts):
 * the high watermark then, as nothing of ours can land later without a new writeFailed. It may
 * not stop at the last stable offset: an uncertain write of ours may sit beyond it, and missing
 * it would copy it twice. While an open transaction holds the LSO below that end the look fails
 * retryably (TARGET_TRANSACTION_OPEN), and the next one goes on from where it got to, towards
 * the same end.
 */
import { isReplicatorError } from "../../errors.js";
import type { TopicPartition } from "../model.js";
import type { ClusterAdmin, Logger, SourceReader } from "../ports.js";
import { lastProvenance, type ProvenanceSettings } from "../provenance.js";
import { fetchTowards, targetBounds } from "./target-read.js";

export interface TargetTailDeps {
  /** A reader of the TARGET cluster. */
  readonly reader: SourceReader;
  /** Admin of the TARGET cluster. */
  readonly admin: ClusterAdmin;
  readonly logger: Logger;
}

export class TargetTail {
  readonly #deps: TargetTailDeps;
  readonly #source: TopicPartition;
  readonly #target: TopicPartition;
  readonly #provenance: ProvenanceSettings;
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
    provenance: ProvenanceSettings,
    /** The lease's stored target position, or null when it has none. */
    from: number | null,
    /** TargetWriter.fences: our writes are transactions, earlier holders fenced. */
    fenced = false,
  ) {
    this.#fenced = fenced;
    this.#deps = deps;
    this.#source = source;
    this.#target = target;
    this.#provenance = provenance;
    this.#position = from;
  }

  /** The target position to store with a checkpoint taken now. Null before the first look. */
  get position(): number | null {
    return this.#position;
  }

  /** Highest source offset of this partition seen in the target (-1 when none). */
  get landed(): number {
    return this.#landed;
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
    this.#uncertain = true;
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

  /**
   * Brings the view up to the target's current end. With no stored position there is nothing
   * to look for (no write of ours can be pending), so the end is simply adopted. Returns how many
   * target records were read.
   */
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
      let fetched: Awaited<ReturnType<SourceReader["fetch"]>>;
      try {
        fetched = await fetchTowards(this.#deps.reader, this.#target, offset, goal, this.#fields());
      } catch (error) {
        if (!isReplicatorError(error, "OFFSET_OUT_OF_RANGE")) throw error;
        // Target retention took the start of the range: nothing to learn from what is gone.
        const bounds = await this.#end();
        if (bounds.logStartOffset <= offset) throw error;
        offset = bounds.logStartOffset;
        continue;
      }
      for (const record of fetched.records) {
        const p = lastProvenance(record, this.#provenance.header);
        if (
          p !== null &&
          p.alias === this.#provenance.sourceAlias &&
          p.partition === this.#source.partition &&
          p.offset > this.#landed
        ) {
          this.#landed = p.offset;
        }
      }
      read += fetched.records.length;
      offset = fetched.nextOffset;
      this.#position = offset;
    }
    return read;
  }

  /**
   * Our own write was acknowledged: its records are ours and need no reading back. `baseOffset`
   * is where the first landed (-1 when the writer could not tell); the end advances past them
   * only when it is known, else the next refresh reads them.
   */
  acknowledged(baseOffset: number, count: number, lastSourceOffset: number): void {
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
