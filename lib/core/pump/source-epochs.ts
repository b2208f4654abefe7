/**
 * A fetch cut where the source's leader epoch changes (FetchedRecords.epochs). The pump writes
 * one part at a time and, before a part of a new epoch, makes sure the last one ended where the
 * new one begins and stores a checkpoint there with the new epoch (Checkpointer.enterEpoch), so
 * a stored epoch always describes whatever a holder wrote past its checkpoint.
 */
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import type { CopyUnits } from "../model.js";
import type { Logger, SourceReader } from "../ports.js";
import type { Checkpointer } from "./checkpointer.js";
import { type FetchedUnits, firstOffset, sliceUnits } from "./copy-units.js";
import type { HeldLease, LeaseGuard } from "./held-lease.js";
import type { Gate, LeaseEnd } from "./model.js";

export interface EpochPart {
  /**
   * The leader epoch of this part's batches: null when they carry none (magic 0/1), undefined
   * when the reader could not tell (nothing to compare with: no change of epoch is assumed).
   */
  readonly epoch: number | null | undefined;
  /** The first offset of the part. */
  readonly from: number;
  readonly units: CopyUnits;
  /** The offset after the part: the next part's start, or the fetch's nextOffset. */
  readonly nextOffset: number;
}

/** `fetched` as parts of one leader epoch each, in offset order; one part when it holds one. */
export function epochParts(fetched: FetchedUnits, requested: number): EpochPart[] {
  const epochs = fetched.epochs ?? [];
  const first = epochs[0];
  if (first === undefined) {
    return [{ epoch: undefined, from: requested, units: fetched.units, nextOffset: fetched.nextOffset }];
  }
  if (epochs.length === 1) {
    return [
      {
        epoch: known(first.epoch),
        from: first.offset,
        units: fetched.units,
        nextOffset: fetched.nextOffset,
      },
    ];
  }
  const parts: EpochPart[] = [];
  let at = 0;
  for (const [i, start] of epochs.entries()) {
    const end = epochs[i + 1]?.offset ?? fetched.nextOffset;
    const from = at;
    // A batch belongs to one epoch, so a cut between units is a cut between epochs.
    while (at < fetched.units.length && firstOffset(fetched.units[at] as CopyUnits[number]) < end) at++;
    parts.push({
      epoch: known(start.epoch),
      from: start.offset,
      units: sliceUnits(fetched.units, from, at),
      nextOffset: end,
    });
  }
  return parts;
}

function known(epoch: number): number | null {
  return epoch < 0 ? null : epoch;
}

/** The source leader epochs of one held partition's copy: what the pump checks as it reads. */
export class EpochWatch {
  readonly #deps: { readonly source: SourceReader; readonly logger: Logger };
  readonly #guard: LeaseGuard;
  readonly #checkpoints: Checkpointer;
  /** Batches mode's target tail: copies a look found that are not matched to source batches yet. */
  readonly #tail: { readonly unmatchedRecords: number } | null;
  constructor(
    deps: { readonly source: SourceReader; readonly logger: Logger },
    guard: LeaseGuard,
    checkpoints: Checkpointer,
    tail: { readonly unmatchedRecords: number } | null,
  ) {
    this.#deps = deps;
    this.#guard = guard;
    this.#checkpoints = checkpoints;
    this.#tail = tail;
  }

  /**
   * Before the first records of a new source leader epoch: did the last epoch end where the new
   * one begins? A clean leader change (a restart, a preferred-leader election) ends it exactly
   * there; an end below is an unclean election that truncated records we already copied, and the
   * pump's start-up (run again) reports and resets it. Then the checkpoint moves to the new epoch.
   * In batches mode copies a look found may reach past `part.from`: the last epoch must reach
   * them too. `written`: the offset after everything written so far, where those copies begin.
   */
  async enter(part: EpochPart, written: number): Promise<Gate | "diverged"> {
    if (part.epoch === undefined || part.epoch === this.#checkpoints.epoch) return "ok";
    const diverged = await this.diverged(Math.max(part.from, this.#copiedTo(written)));
    if (diverged === true) return "diverged";
    if (diverged !== false) return diverged;
    const last = this.#checkpoints.epoch;
    if (last !== null) {
      const fields = {
        ...this.#guard.held.logFields(),
        leaderEpoch: part.epoch,
        previous: last,
        offset: part.from,
      };
      this.#deps.logger.info("source leader changed; checkpointing where the new epoch begins", fields);
    }
    return this.#checkpoints.enterEpoch(part.from, part.epoch);
  }

  /**
   * A fetch failed for good. Past the log's end, a truncation under what was read explains it
   * ("diverged": the start-up resets it); anything else, or a log that is not ours, is thrown.
   */
  async failedRead(error: unknown, readTo: number): Promise<"diverged" | LeaseEnd> {
    if (!isReplicatorError(error, "OFFSET_OUT_OF_RANGE")) throw error;
    const diverged = await this.diverged(readTo);
    if (diverged === true) return "diverged";
    if (diverged !== false) return diverged;
    throw error;
  }

  /**
   * Batches mode: our copies in the target match no source batch (TARGET_COPY_MISMATCH). When
   * the epoch we copy in ended below where the copies reach (#copiedTo), an unclean election
   * took records under them and the start-up resets it ("diverged"); else the error stands.
   */
  async mismatch(error: unknown, written: number): Promise<Gate | "diverged"> {
    if (!isReplicatorError(error, "TARGET_COPY_MISMATCH")) throw error;
    const diverged = await this.diverged(this.#copiedTo(written));
    if (diverged === false) throw error;
    return diverged === true ? "diverged" : diverged;
  }

  /**
   * How far the target's copies reach at least: batches mode matches the copies a look found to
   * the source batches after `written` (everything written so far), lazily and in order, and each
   * covers at least as many offsets as it has records. Not from where a fetch began: after
   * retention deleted records before they were read, the feed goes on past them.
   */
  #copiedTo(written: number): number {
    return written + (this.#tail?.unmatchedRecords ?? 0);
  }

  /** Whether OffsetForLeaderEpoch proves the epoch we copy in ended below `readTo` (false when unknown). */
  async diverged(readTo: number): Promise<boolean | LeaseEnd> {
    const epoch = this.#checkpoints.epoch;
    if (epoch === null) return false;
    const held = this.#guard.held;
    const end = await this.#guard.retry("checking the source log failed", () =>
      this.#deps.source.endOffsetForLeaderEpoch(held.route.source, epoch),
    );
    if (typeof end === "string") return end;
    if (end < 0 || end >= readTo) return false;
    this.#deps.logger.warn("source leader epoch ended below what was read; checking the log again", {
      ...held.logFields(),
      leaderEpoch: epoch,
      endOffset: end,
      readTo,
    });
    return true;
  }
}

/** A divergence seen while copying that the start-up's continuity check does not confirm. */
export function unexplainedDivergence(held: HeldLease, offset: number): ReplicatorError {
  const { topic, partition } = held.route.source;
  return new ReplicatorError(
    "KAFKA_FATAL",
    `source ${topic}/${partition}: a leader epoch ended below offset ${offset} read in it, but OffsetForLeaderEpoch on taking the partition again shows no truncation; stopping the partition rather than reading on`,
    { details: { topic, partition, offset } },
  );
}
