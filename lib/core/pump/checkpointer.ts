/**
 * Checkpointing of one held partition: stores how far the pump got, with the target position
 * (target-tail.ts) and the source log's identity (source-continuity.ts) that belong to it.
 *
 * A checkpoint only ever moves past records the target acknowledged (or offsets that hold no data
 * records). While the lease store is unreachable a checkpoint is deferred: copying goes on while
 * the lease is valid by our own clock, and the next checkpoint covers the deferred one.
 *
 * Coalescing: the copy loop asks `due()` before it starts a checkpoint, so a partition writes at
 * most one routine checkpoint per `intervalMs` (leases.checkpointIntervalMs); the next one covers
 * the batches in between, as a deferred one does. A stop (handoff, release, end of run) and a
 * write cut at the lease deadline checkpoint at once, whatever the interval (the pump's flush).
 * What that costs: in exactly-once mode nothing (the successor's tail look from the stored target
 * position skips whatever of ours landed after it); at-least-once, a crash repeats at most what
 * was acknowledged since the last stored checkpoint: one interval of data plus the batch in flight.
 *
 * Without provenance delivery is at-least-once; duplicates arise only where a write reached the
 * target but its checkpoint did not reach the store:
 *  - the process dies (or the lease is stolen) between a target ack and the checkpoint: what was
 *    acknowledged since the last stored checkpoint is written again by the next holder, at most
 *    one checkpoint interval of batches plus the batch in flight (one batch with interval 0);
 *  - a write is retried after a timeout although the first attempt landed;
 *  - during a lease-store outage the pump keeps copying while its lease is valid by its own
 *    clock, and those batches are checkpointed only when the store answers again, so a crash in
 *    an outage repeats at most one lease duration of data.
 */
import { describeError, isReplicatorError } from "../../errors.js";
import { withProducerId } from "../lease/checkpoint.js";
import type { Clock, LeaseStore, Logger } from "../ports.js";
import type { HeldLease, LeaseGuard } from "./held-lease.js";
import type { Gate } from "./model.js";
import type { TargetTail } from "./target-tail.js";

export interface CheckpointerDeps {
  readonly store: LeaseStore;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** "deferred": the store did not answer (retryably); the next checkpoint covers this one. */
export type CheckpointResult = "ok" | "lost" | "deferred";

type Pending = "ok" | "lost" | "deferred" | { readonly error: unknown };

export class Checkpointer {
  readonly #deps: CheckpointerDeps;
  readonly #guard: LeaseGuard;
  readonly #held: HeldLease;
  readonly #tail: TargetTail | null;
  #checkpoint: number | null;
  /** The highest offset a checkpoint was asked to store, whether or not the store confirmed it. */
  #asked: number | null = null;
  /** The checkpoint of the last batch written, while it is under way. */
  #pending: Promise<Pending> | null = null;
  readonly #intervalMs: number;
  /** When the last routine checkpoint started; null before the first. */
  #lastStartedAt: number | null = null;
  /** Which source log the checkpoints belong to (see source-continuity.ts); set at start-up. */
  sourceTopicId: string | null = null;
  /**
   * Leader epoch of the source records copied from the stored checkpoint on (Lease.sourceEpoch),
   * stored with every checkpoint; null when unknown. It changes only through enterEpoch, so
   * whatever a holder writes past its stored checkpoint is always of the stored epoch.
   */
  #epoch: number | null;

  /** `intervalMs`: at most one routine checkpoint per interval (0: one per batch). */
  constructor(deps: CheckpointerDeps, guard: LeaseGuard, tail: TargetTail | null, intervalMs = 0) {
    this.#deps = deps;
    this.#intervalMs = intervalMs;
    this.#guard = guard;
    this.#held = guard.held;
    this.#tail = tail;
    this.#checkpoint = this.#held.lease.checkpoint;
    this.#epoch = this.#held.lease.sourceEpoch ?? null;
  }

  /** The last offset the store accepted as checkpoint. */
  get checkpoint(): number | null {
    return this.#checkpoint;
  }

  /** Takes the checkpoint anew from the held lease, after start-up may have reset it. */
  reload(): void {
    this.#checkpoint = this.#held.lease.checkpoint;
    this.#asked = null; // a reset may have moved it back
    this.#epoch = this.#held.lease.sourceEpoch ?? null;
  }

  /** See #epoch. */
  get epoch(): number | null {
    return this.#epoch;
  }

  /**
   * Records of leader epoch `epoch` begin at `offset`, and everything before it was copied:
   * stores a checkpoint there with that epoch before any of them is written (retried while the
   * lease is held). Why the next epoch and not the last record's: a successor that finds our
   * writes past the checkpoint after a crash knows their epoch, so OffsetForLeaderEpoch of it
   * tells a clean leader change from a truncation under them (source-continuity.ts).
   */
  async enterEpoch(offset: number, epoch: number | null): Promise<Gate> {
    // Also from no epoch to one (a new lease's first records): stored later, a truncation under
    // writes of ours that a crash left past the checkpoint could not be told from a clean change.
    if ((await this.settled()) === "lost") return "lease-lost";
    this.#epoch = epoch;
    return this.storeBeforeWriting(offset);
  }

  /** Stores `offset` once; a store that does not answer defers it. */
  async store(offset: number): Promise<CheckpointResult> {
    try {
      return await this.#attempt(offset);
    } catch (error) {
      if (isReplicatorError(error) && error.retryable) {
        // Copying may go on while the lease is valid by our clock; the next checkpoint carries
        // this offset too, because a checkpoint covers everything before it.
        this.#deps.logger.warn("checkpoint deferred", {
          ...this.#held.logFields(),
          offset,
          code: error.code,
        });
        return "deferred";
      }
      throw error;
    }
  }

  /**
   * Batches mode, after a fence: unless the lease lists the writer's producer id already, stores
   * it with a checkpoint that stays put (retried while the lease is held). Before anything is
   * written under a new id: a successor's look tells our copies by the ids the lease lists.
   */
  async storeProducerId(): Promise<Gate> {
    // Twice at most: a checkpoint of ours stored with its answer lost makes the first write
    // find that offset stored, which reads as success (loss.ts) without the id; the second
    // starts from the lease that answer returned.
    for (let attempt = 0; this.#producerIds() !== undefined; attempt++) {
      // The latest offset asked for, not the last confirmed: that lost answer's may lie past
      // the last record landed (control batches, compaction gaps), and behind it is refused.
      const offset = this.#asked ?? this.#checkpoint;
      if (offset === null || attempt === 2)
        throw new Error(
          `unreachable: producer id ${this.#tail?.producerId} not stored (checkpoint ${offset}, attempt ${attempt})`,
        );
      const stored = await this.storeNow(offset);
      if (stored !== "ok") return stored;
    }
    return "ok";
  }

  /** After the checkpoint in flight, stores `offset`, retried while the lease is held. */
  async storeNow(offset: number): Promise<Gate> {
    if ((await this.settled()) === "lost") return "lease-lost";
    return this.storeBeforeWriting(offset);
  }

  /** Retries a deferred checkpoint while the lease is held; nothing is written meanwhile. */
  async storeBeforeWriting(offset: number): Promise<Gate> {
    const stored = await this.#guard.retry("checkpoint deferred", () => this.#attempt(offset), { offset });
    return stored === "lost" ? "lease-lost" : stored;
  }

  /**
   * Checkpoints the progress of the batch just written; in exactly-once mode the next batch is
   * written meanwhile, which takes the store's round trip off the copy path. Safe because a
   * checkpoint covers only acknowledged records and carries the target position taken when it
   * starts, whatever is in flight, and because writing does not depend on it: a write starts
   * only while the lease is valid by our own clock (LeaseGuard.allowsWrite).
   */
  start(offset: number): void {
    this.#lastStartedAt = this.#deps.clock.now();
    this.#pending = this.store(offset).catch((error: unknown) => ({ error }));
  }

  /**
   * Whether a routine checkpoint may start now: the interval since the last one has passed. A
   * pump that must stop (handoff requested, end of run) checkpoints whatever the interval.
   */
  due(): boolean {
    if (this.#held.signal.aborted || this.#lastStartedAt === null) return true;
    return this.#deps.clock.now() - this.#lastStartedAt >= this.#intervalMs;
  }

  /** Waits for the checkpoint in flight, if any; throws what it threw. */
  async settled(): Promise<"ok" | "lost"> {
    const pending = this.#pending;
    if (pending === null) return "ok";
    this.#pending = null;
    const outcome = await pending;
    if (typeof outcome === "object") throw outcome.error;
    return outcome === "lost" ? "lost" : "ok";
  }

  /** After the pump's loop: one last try for progress a store outage kept from being recorded. */
  async flush(next: number | null): Promise<void> {
    if (next === null || this.#held.lost || next <= (this.#checkpoint ?? -1)) return;
    try {
      await this.store(next);
    } catch (error) {
      this.#deps.logger.warn("final checkpoint failed", {
        ...this.#held.logFields(),
        ...describeError(error),
      });
    }
  }

  /** The lease's producer ids with the writer's added; undefined when it is listed (or unknown). */
  #producerIds(): readonly bigint[] | undefined {
    const id = this.#tail?.producerId ?? null;
    const stored = this.#held.lease.producerIds;
    if (id === null) return undefined;
    const ids = withProducerId(stored ?? [], id);
    return ids === stored ? undefined : ids;
  }

  /** One store call: "ok", "lost" (the lease is marked lost), or it throws what the store threw. */
  async #attempt(requested: number): Promise<"ok" | "lost"> {
    const held = this.#held;
    try {
      // Writes are sequential and none is under way here, so the tail's position is the one
      // that belongs to this checkpoint (see target-tail.ts).
      const position = this.#tail?.position ?? null;
      // A look may have moved the position past records of ours it found landed (an uncertain
      // write's): the checkpoint stored with it must be past them too, or the next holder,
      // reading from the position, would copy them again.
      const offset = Math.max(requested, (this.#tail?.landed ?? -1) + 1);
      this.#asked = Math.max(this.#asked ?? offset, offset);
      // Taken now, like the position (see #epoch).
      const source = { topicId: this.sourceTopicId, leaderEpoch: this.#epoch };
      const now = this.#deps.clock.now();
      const producerIds = this.#producerIds();
      held.update(
        await this.#deps.store.checkpoint(
          held.lease,
          offset,
          now,
          position ?? undefined,
          source,
          producerIds,
        ),
      );
      this.#checkpoint = offset;
      return "ok";
    } catch (error) {
      if (!isReplicatorError(error, "LEASE_LOST")) throw error;
      held.markLost();
      return "lost";
    }
  }
}
