/**
 * The copy loop of one held partition: fetch from the source, write to the target, checkpoint.
 * Its parts, one file each: held-lease.ts (the lease, its write gate, retrying while it is held),
 * pump-start.ts (fence, source continuity, start offset, recovery), source-feed.ts (fetches read
 * ahead), checkpointer.ts (storing progress); this file runs the loop and the writes.
 *
 * Correctness rule: the checkpoint only ever moves past records the target acknowledged (or
 * offsets that hold no data records), so killing the process at any instant loses nothing.
 *
 * With provenance on (the default) delivery is exactly-once: every copied record carries a
 * provenance header, every checkpoint carries a target position (see target-tail.ts), and the
 * pump reads the target's tail when it takes a partition and before the write after any write
 * that was not acknowledged, so whatever of an interrupted or uncertain write already landed is
 * never written again. Records that came from the target cluster (active-active) are skipped,
 * their offsets checkpointed all the same. target.copy "batches" passes source batches through
 * (copy-units.ts), exactly-once by fenced writes alone (target-tail.ts). Epochs: source-epochs.ts.
 *
 * Without provenance delivery is at-least-once (what a crash repeats: checkpointer.ts).
 */
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import { type CopyMode, type CopyUnits, type FetchLimits, isBatches, type StartFrom } from "../model.js";
import type {
  Clock,
  ClusterAdmin,
  LeaseStore,
  Logger,
  ReplicationMetrics,
  SourceReader,
  TargetWriter,
} from "../ports.js";
import { isLoopback, type ProvenanceSettings, type ProvenanceStamp, stampFor } from "../provenance.js";
import type { BackoffPolicy } from "../retry.js";
import { Checkpointer } from "./checkpointer.js";
import {
  type FetchedUnits,
  lastOffset,
  reportCopied,
  sliceUnits,
  unitsAfter,
  unitsCovering,
} from "./copy-units.js";
import { type HeldLease, LeaseGuard } from "./held-lease.js";
import type { Gate, LeaseEnd } from "./model.js";
import { findStart, pinStart } from "./pump-start.js";
import type { ReadAheadBudget } from "./read-ahead.js";
import { EpochWatch, epochParts, unexplainedDivergence } from "./source-epochs.js";
import { SourceFeed } from "./source-feed.js";
import { tailFor } from "./tail-for.js";
import type { TargetTail, TargetTailDeps } from "./target-tail.js";

export interface PumpSettings {
  readonly batch: FetchLimits;
  /** Where a partition without a checkpoint starts: the log start or the log end. */
  readonly startFrom: StartFrom;
  /** A write starts only this long before the lease expiry: at least a request timeout, retries included. */
  readonly writeSafetyMarginMs: number;
  /** A write takes along fetches read ahead (or, behind, on their way) while together they hold at most this (SourceFeed.withReady); a partition also reads ahead up to this. @default 0 (one fetch per write) */
  readonly writeMaxBytes?: number;
  /** At most one routine checkpoint per this many ms (Checkpointer). @default 0 (one per batch) */
  readonly checkpointIntervalMs?: number;
  /** Back-off for retryable failures. @default { initialMs: 100, maxMs: 5000 } */
  readonly retry?: BackoffPolicy;
  /** How often to look again at a lease too close to expiry to write, waiting for a renewal. @default 100 */
  readonly leasePollMs?: number;
  /** Exactly-once: provenance headers and the target tail (needs PumpDeps.targetTail). Null: at-least-once. */
  readonly provenance?: ProvenanceSettings | null;
  /** target.copy; "batches" is exactly-once by fenced writes and the target tail alone. @default "records" */
  readonly copy?: CopyMode;
}

export interface PumpDeps {
  readonly source: SourceReader;
  readonly target: TargetWriter;
  readonly sourceAdmin: ClusterAdmin;
  readonly store: LeaseStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
  /** Reader and admin of the target cluster; required when PumpSettings.provenance is set or copy is "batches". */
  readonly targetTail?: TargetTailDeps;
  /** Bounds what the worker's pumps read ahead of their writes, together. @default unbounded (per pump: READ_AHEAD results) */
  readonly readAheadBudget?: ReadAheadBudget;
}

export type PumpStopReason =
  | LeaseEnd
  /** A non-retryable error; see `error`. */
  | "error";

export interface PumpStatus {
  readonly records: number;
  readonly bytes: number;
  /** The next offset to read, or null before the start offset is known. */
  readonly nextOffset: number | null;
  /** The last offset the store accepted as checkpoint. */
  readonly checkpoint: number | null;
  /** All up to the last fetch's high watermark is written; once the pump stopped, also checkpointed. */
  readonly caughtUp: boolean;
  readonly stopReason: PumpStopReason | null;
  readonly error: ReplicatorError | null;
}

/** What is left of a write after one attempt, or how the lease ended first. */
type WriteStep = CopyUnits | LeaseEnd;

/**
 * Errors are handled per partition: retryable ones are retried in place with back-off while the
 * lease is held (LeaseGuard.retry); a non-retryable one (RECORD_REJECTED, CORRUPT_BATCH, ...)
 * stops this partition only, after checkpointing what landed, is counted in
 * metrics.partitionError and left in `status.error` for the worker, which logs it and gives the
 * lease back for the fleet to retry after a backoff (failure-backoff.ts), never in a tight loop.
 */
export class PartitionPump {
  readonly #deps: PumpDeps;
  readonly #settings: PumpSettings;
  readonly #held: HeldLease;
  readonly #guard: LeaseGuard;
  readonly #checkpoints: Checkpointer;
  readonly #epochs: EpochWatch;
  #records = 0;
  #bytes = 0;
  #nextOffset: number | null = null;
  #caughtUp = false;
  #stopReason: PumpStopReason | null = null;
  #error: ReplicatorError | null = null;
  readonly #tail: TargetTail | null;
  /** Records mode's provenance; null in at-least-once and batches mode. */
  readonly #provenance: ProvenanceSettings | null;
  /** Our provenance header for this partition's records; null when not exactly-once. */
  readonly #stamp: ProvenanceStamp | null;
  readonly #copyMode: CopyMode;

  constructor(deps: PumpDeps, settings: PumpSettings, held: HeldLease) {
    this.#deps = deps;
    this.#settings = settings;
    this.#held = held;
    this.#copyMode = settings.copy ?? "records";
    this.#provenance = this.#copyMode === "batches" ? null : (settings.provenance ?? null);
    this.#tail = tailFor(deps.targetTail, deps.target, held, this.#copyMode, this.#provenance);
    this.#stamp = this.#provenance === null ? null : stampFor(this.#provenance, held.route.source.partition);
    this.#guard = new LeaseGuard(held, deps.clock, deps.logger, {
      writeSafetyMarginMs: settings.writeSafetyMarginMs,
      ...(settings.leasePollMs === undefined ? {} : { leasePollMs: settings.leasePollMs }),
      ...(settings.retry === undefined ? {} : { retry: settings.retry }),
    });
    this.#checkpoints = new Checkpointer(deps, this.#guard, this.#tail, settings.checkpointIntervalMs ?? 0);
    this.#epochs = new EpochWatch(deps, this.#guard, this.#checkpoints, this.#tail);
  }

  get status(): PumpStatus {
    return {
      records: this.#records,
      bytes: this.#bytes,
      nextOffset: this.#nextOffset,
      checkpoint: this.#checkpoints.checkpoint,
      caughtUp: this.#caughtUp,
      stopReason: this.#stopReason,
      error: this.#error,
    };
  }

  get held(): HeldLease {
    return this.#held;
  }

  /** Runs until a stop condition; never rejects. */
  async run(): Promise<PumpStatus> {
    try {
      this.#stopReason = await this.#loop();
    } catch (error) {
      this.#fail(error);
    }
    try {
      if ((await this.#checkpoints.settled()) === "lost" && this.#stopReason !== "error")
        this.#stopReason = "lease-lost";
    } catch (error) {
      if (this.#stopReason !== "error") this.#fail(error);
    }
    await this.#checkpoints.flush(this.#nextOffset);
    if (this.#checkpoints.checkpoint !== this.#nextOffset) this.#caughtUp = false;
    await this.#guard.endOpenTransaction(this.#deps.target);
    if (this.#stopReason === "lease-lost") {
      this.#deps.logger.warn("lease lost, partition stopped", this.#held.logFields());
    } else {
      const error = this.#error === null ? {} : { code: this.#error.code };
      this.#deps.logger.info("partition stopped", {
        ...this.#held.logFields(),
        reason: this.#stopReason,
        ...error,
      });
    }
    return this.status;
  }

  async #loop(): Promise<PumpStopReason> {
    const start = {
      deps: this.#deps,
      guard: this.#guard,
      checkpointer: this.#checkpoints,
      tail: this.#tail,
      // A partition that appeared while the mirror ran starts at its first record (PartitionRoute.startFrom).
      startFrom: this.#held.route.startFrom ?? this.#settings.startFrom,
    };
    let divergedAt: number | null = null;
    for (;;) {
      const found = await findStart(start);
      if (typeof found === "string") return found;
      // The start-up found no truncation where the reads saw one: never go round again.
      if (divergedAt !== null && !found.reset) throw unexplainedDivergence(this.#held, divergedAt);
      this.#nextOffset = found.offset;
      const pinned = await pinStart(start, found);
      if (pinned !== "ok") return pinned;

      const feed = new SourceFeed(
        this.#deps,
        this.#guard,
        this.#settings.batch,
        found.offset,
        this.#copyMode,
        this.#settings.writeMaxBytes ?? 0,
      );
      let ended: PumpStopReason | "diverged";
      try {
        ended = await this.#copy(feed);
      } finally {
        feed.close();
      }
      if (ended !== "diverged") return ended;
      divergedAt = this.#nextOffset ?? 0;
      // Stored where we got to, the start-up sees how far the copy went past the truncation
      // (at-least-once too) and reports it, as for a holder that finds it on taking the lease.
      const stored = await this.#checkpoints.storeNow(this.#nextOffset);
      if (stored !== "ok") return stored;
    }
  }

  async #copy(feed: SourceFeed): Promise<PumpStopReason | "diverged"> {
    const held = this.#held;
    const checkpoints = this.#checkpoints;
    for (;;) {
      const outcome = await feed.next();
      if (outcome.kind === "stopped") return outcome.reason ?? held.end();
      if (outcome.kind === "failed") return this.#epochs.failedRead(outcome.error, this.#nextOffset ?? 0);
      const fetched = await feed.withReady(outcome.fetched);
      const fetchedAt = this.#deps.clock.now();
      for (const part of epochParts(fetched, this.#nextOffset ?? fetched.nextOffset)) {
        // Where the copies a look found begin: after everything written so far.
        const written = this.#nextOffset ?? part.from;
        const entered = await this.#epochs.enter(part, written);
        if (entered !== "ok") return entered;
        if (part.units.length > 0) {
          const gate = await this.#guard.allowsWrite();
          if (gate !== "ok") return gate;
          const wrote = await this.#write(this.#outgoing(part.units)).catch((e) =>
            this.#epochs.mismatch(e, written),
          );
          if (wrote !== "ok") return wrote;
        }
        this.#nextOffset = part.nextOffset;
      }
      if (fetched.units.length > 0) this.#copied(fetched, fetchedAt);

      // The previous checkpoint ran while this batch was written; checkpoints stay in order.
      if ((await checkpoints.settled()) === "lost") return "lease-lost";
      // Also when only control batches or compaction gaps were skipped: no write, but progress.
      // At most one per checkpoint interval; a skipped one is covered by the next (Checkpointer).
      if (fetched.nextOffset > (checkpoints.checkpoint ?? -1) && checkpoints.due())
        checkpoints.start(fetched.nextOffset);
      const atEnd = fetched.nextOffset >= fetched.highWatermark;
      // Not overlapped when caught up (nothing to overlap with), when handing over (which must
      // follow the checkpoint), or in at-least-once mode, where a crash would then repeat two
      // batches instead of one; in exactly-once mode the target tail makes either harmless.
      if ((atEnd || held.signal.aborted || this.#tail === null) && (await checkpoints.settled()) === "lost")
        return "lease-lost";
      // A run that stops when caught up need not wait out the checkpoint interval: the stop flushes.
      this.#caughtUp = atEnd;
      if (held.signal.aborted) return held.end();
    }
  }

  #copied(fetched: FetchedUnits, fetchedAt: number): void {
    this.#records += reportCopied(this.#deps.metrics, this.#held.route.source, fetched, fetchedAt);
    this.#bytes += fetched.bytes;
  }

  /** What is written for a fetched batch: loopbacks dropped (the writer appends our provenance). */
  #outgoing(units: CopyUnits): CopyUnits {
    const provenance = this.#provenance;
    // Batches mode has no provenance to tell a loopback by: config refuses setups prone to loops.
    if (provenance === null || isBatches(units)) return units;
    return units.some((r) => isLoopback(r, provenance))
      ? units.filter((r) => !isLoopback(r, provenance))
      : units;
  }

  /**
   * Writes `records`, each request bounded by the lease (the writer's deadline). A write cut at
   * the deadline landed a prefix: that is checkpointed, and the rest waits at the lease gate
   * for a renewal, or the pump stops there.
   */
  async #write(units: CopyUnits): Promise<Gate> {
    let remaining = units;
    while (remaining.length > 0) {
      const left = remaining;
      const step = await this.#guard.retry("write failed", () => this.#writeStep(left));
      if (typeof step === "string") return step;
      remaining = step;
    }
    return "ok";
  }

  /**
   * One attempt at writing `remaining`: look at the target first if an earlier attempt's
   * outcome is unknown, pass the lease gate, write what has not landed. Returns what is left.
   */
  async #writeStep(remaining: CopyUnits): Promise<WriteStep> {
    const tail = this.#tail;
    try {
      // An uncertain earlier attempt may have landed some of these records; those are not
      // written again. Fenced first: the attempt's transaction is aborted if still open, and
      // nothing of it can become visible after the look.
      if (tail?.uncertain) {
        // Only a holder may fence: a worker that woke past its lease (frozen mid-write) would
        // bump the epoch of the worker that took over and abort its transaction.
        const allowed = await this.#guard.allowsWrite();
        if (allowed !== "ok") return allowed;
        await this.#deps.target.fence(this.#held.route.target, () => this.#guard.writeDeadline());
        await tail.refresh();
        // The fence may have brought a new producer id (Lease.producerIds).
        const listed = await this.#checkpoints.storeProducerId();
        if (listed !== "ok") return listed;
      }
      const pending = tail === null ? remaining : await tail.pending(remaining);
      if (pending.length === 0) return [];
      const gate = await this.#guard.allowsWrite();
      if (gate !== "ok") return gate;
      const { route, hardDeadline } = this.#held;
      const result = await this.#deps.target
        .write(route.target, pending, this.#stamp, () => this.#guard.writeDeadline(), hardDeadline)
        .catch((error: unknown) => {
          tail?.writeFailed();
          throw error;
        });
      const landed = sliceUnits(pending, 0, unitsCovering(pending, result.acknowledged));
      const lastUnit = landed.at(-1);
      const last = lastUnit === undefined ? -1 : lastOffset(lastUnit);
      if (landed.length > 0) tail?.acknowledged(result.baseOffset, result.acknowledged, last);
      // Batches mode, where the copies landed unknown: the next step looks them up and matches them.
      if (tail?.uncertain) return remaining;
      if (landed.length === pending.length) return [];
      return await this.#writeCut(result.acknowledged, result.records, last, remaining);
    } catch (error) {
      if (!isReplicatorError(error, "PRODUCER_FENCED")) throw error;
      // Another holder fenced our producer: whatever our lease says, the partition is theirs.
      this.#deps.logger.warn("write refused: another holder fenced this partition", {
        ...this.#held.logFields(),
        error: error.message,
      });
      this.#held.markLost();
      return "lease-lost";
    }
  }

  /** A write cut at the lease deadline: checkpoint what landed (up to `last`), return the rest. */
  async #writeCut(
    acknowledged: number,
    records: number,
    last: number,
    remaining: CopyUnits,
  ): Promise<WriteStep> {
    if (acknowledged === 0) {
      // Nothing fitted before the lease's end (a margin shorter than a request): wait for it
      // to change rather than ask again at once.
      await this.#guard.waitForRenewal();
      return remaining;
    }
    this.#deps.logger.info("write cut at the lease deadline; checkpointing what landed", {
      ...this.#held.logFields(),
      acknowledged,
      records,
    });
    // In order after the checkpoint of the batch before; the rest of this batch follows.
    if ((await this.#checkpoints.settled()) === "lost") return "lease-lost";
    this.#nextOffset = last + 1;
    this.#checkpoints.start(last + 1);
    return unitsAfter(remaining, last);
  }

  #fail(error: unknown): void {
    const failure = isReplicatorError(error)
      ? error
      : new ReplicatorError("KAFKA_FATAL", "unexpected error in partition pump", { cause: error });
    this.#error = failure;
    this.#stopReason = "error";
    this.#caughtUp = false;
    const { topic, partition } = this.#held.route.source;
    // Logged by the worker (failure-report.ts), which knows whether it said so already this run.
    this.#deps.metrics.partitionError({ topic, partition, code: failure.code });
  }
}
