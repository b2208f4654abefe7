/**
 * The copy loop of one held partition: fetch from the source, write to the target, checkpoint.
 *
 * Correctness rule: the checkpoint only ever moves past records the target acknowledged (or
 * offsets that hold no data records), so killing the process at any instant loses nothing.
 *
 * With provenance on (the default) delivery is exactly-once: every copied record carries a
 * provenance header, every checkpoint carries a target position (see target-tail.ts), and the
 * pump reads the target's tail when it takes a partition and before the write after any write
 * that was not acknowledged, so whatever of an interrupted or uncertain write already landed is
 * never written again. Records that came
 * from the target cluster (active-active) are skipped, their offsets checkpointed all the same.
 *
 * Without provenance delivery is at-least-once; duplicates arise only where a write reached the
 * target but its checkpoint did not reach the store:
 *  - the process dies (or the lease is stolen) between a target ack and the checkpoint: at most
 *    the one batch in flight is written again by the next holder;
 *  - a write is retried after a timeout although the first attempt landed;
 *  - during a lease-store outage the pump keeps copying while its lease is valid by its own
 *    clock, and those batches are checkpointed only when the store answers again, so a crash in
 *    an outage repeats at most one lease duration of data.
 */
import { isReplicatorError, ReplicatorError } from "../errors.js";
import type { FetchedRecords, FetchLimits, MirrorRecord, WriteResult } from "./model.js";
import type { PartitionRoute } from "./planner.js";
import type {
  Clock,
  ClusterAdmin,
  Lease,
  LeaseStore,
  Logger,
  ReplicationMetrics,
  SourceReader,
  TargetWriter,
} from "./ports.js";
import { isLoopback, type ProvenanceSettings, type ProvenanceStamp, stampFor } from "./provenance.js";
import { ReadAhead, type ReadAheadBudget } from "./read-ahead.js";
import { resumeContinuity } from "./source-continuity.js";
import { TargetTail, type TargetTailDeps } from "./target-tail.js";

export type StartFrom = "earliest" | "latest";

export interface PumpSettings {
  readonly batch: FetchLimits;
  /** Where a partition without a checkpoint starts: the log start or the log end. */
  readonly startFrom: StartFrom;
  /**
   * A write starts only if now + this margin is still before the lease expiry. Must be at least
   * the writer's request timeout (retries included), so a write that started in time also ends
   * before another worker may take the lease.
   */
  readonly writeSafetyMarginMs: number;
  /** Back-off for retryable failures. @default { initialMs: 100, maxMs: 5000 } */
  readonly retry?: { readonly initialMs: number; readonly maxMs: number };
  /** How often to look again at a lease too close to expiry to write, waiting for a renewal. @default 100 */
  readonly leasePollMs?: number;
  /**
   * Exactly-once mode: provenance headers on every copied record and the target tail read
   * before writes. Needs PumpDeps.targetTail. Null or absent: at-least-once.
   */
  readonly provenance?: ProvenanceSettings | null;
}

export interface PumpDeps {
  readonly source: SourceReader;
  readonly target: TargetWriter;
  readonly sourceAdmin: ClusterAdmin;
  readonly store: LeaseStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
  /** Reader and admin of the target cluster; required when PumpSettings.provenance is set. */
  readonly targetTail?: TargetTailDeps;
  /** Bounds what the worker's pumps read ahead of their writes, together. @default unbounded (per pump: READ_AHEAD results) */
  readonly readAheadBudget?: ReadAheadBudget;
}

/**
 * A lease this worker holds, shared by its pump (which checkpoints) and the worker's renewer
 * (which extends it). Both only ever move `lease` forward.
 */
export class HeldLease {
  #lease: Lease;
  #lost = false;
  readonly route: PartitionRoute;
  /** Expiries are capped here; once the lease reaches it no renewal can extend it. */
  readonly hardDeadline: number;
  readonly #stop = new AbortController();

  constructor(lease: Lease, route: PartitionRoute, hardDeadline: number) {
    this.#lease = lease;
    this.route = route;
    this.hardDeadline = hardDeadline;
  }

  get lease(): Lease {
    return this.#lease;
  }

  get lost(): boolean {
    return this.#lost;
  }

  /**
   * Until when this worker may count on the lease: its stored expiry, but never past our own
   * deadline. A lease handed over to us carries an expiry the giver chose, which may lie beyond
   * the end of our run.
   */
  get expiresAt(): number {
    return Math.min(this.#lease.expiresAt, this.hardDeadline);
  }

  /** Aborts when the pump must stop: worker shutdown or lease lost. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /**
   * Takes a lease version the store returned. A checkpoint answered after a concurrent renew
   * carries the older expiry; the renew's expiry was written all the same, so keep the later one.
   */
  update(lease: Lease): void {
    const expiresAt = Math.max(lease.expiresAt, this.#lease.expiresAt);
    this.#lease = lease.counter === this.#lease.counter ? { ...lease, expiresAt } : lease;
    // Another worker asked for this lease: finish the batch in flight, checkpoint, then let the
    // worker release it. Stopping here, where every fresh lease version arrives, means the
    // request is honoured at the next renewal or checkpoint, whichever comes first.
    if (this.handedOff) this.#stop.abort();
  }

  /** True once another worker asked for the lease; the worker releases it when the pump ends. */
  get handedOff(): boolean {
    const { handoffTo, owner } = this.#lease;
    return handoffTo !== null && handoffTo !== owner;
  }

  markLost(): void {
    this.#lost = true;
    this.#stop.abort();
  }

  stop(): void {
    this.#stop.abort();
  }
}

export type PumpStopReason =
  /** The worker asked it to stop. */
  | "stopped"
  /** The store said the lease is no longer ours (stolen, expired and taken, released). */
  | "lease-lost"
  /** The lease ran out by our own clock (e.g. the store was unreachable for renewals). */
  | "lease-expired"
  /** The lease reached the hard deadline and no write fits before it any more. */
  | "deadline"
  /** A non-retryable error; see `error`. */
  | "error";

export interface PumpStatus {
  readonly records: number;
  readonly bytes: number;
  /** The next offset to read, or null before the start offset is known. */
  readonly nextOffset: number | null;
  /** The last offset the store accepted as checkpoint. */
  readonly checkpoint: number | null;
  /** The last fetch reached the high watermark and everything it returned is written and checkpointed. */
  readonly caughtUp: boolean;
  readonly stopReason: PumpStopReason | null;
  readonly error: ReplicatorError | null;
}

type FetchOutcome =
  | { readonly kind: "fetched"; readonly fetched: FetchedRecords }
  | { readonly kind: "stopped" }
  | { readonly kind: "failed"; readonly error: unknown };

type Gate = "ok" | Exclude<PumpStopReason, "error">;

type CheckpointOutcome = "ok" | "lost" | "deferred" | { readonly error: unknown };

const DEFAULT_RETRY = { initialMs: 100, maxMs: 5000 } as const;

/**
 * Fetch results read ahead of the write in progress, per partition. Two keep reading busy while
 * a batch is written (one was not enough: the bench's pumps waited on fetches 60% of their time);
 * each is at most batch.maxBytes plus one source batch, and PumpDeps.readAheadBudget bounds them
 * across the worker.
 */
const READ_AHEAD = 2;

/**
 * Errors are handled per partition: retryable ones are retried in place with back-off; a
 * non-retryable one (RECORD_REJECTED, CORRUPT_BATCH, TARGET_PARTITIONS_TOO_FEW, ...) stops this
 * partition only, is reported through metrics.partitionError and logger.error, and the lease is
 * deliberately NOT released: the worker lets it run out, so a poison record is retried at most
 * once per lease duration by the whole fleet instead of in a tight loop by every worker.
 */
export class PartitionPump {
  readonly #deps: PumpDeps;
  readonly #settings: PumpSettings;
  readonly #held: HeldLease;
  #records = 0;
  #bytes = 0;
  #nextOffset: number | null = null;
  #checkpoint: number | null;
  #caughtUp = false;
  #stopReason: PumpStopReason | null = null;
  #error: ReplicatorError | null = null;
  readonly #tail: TargetTail | null;
  readonly #provenance: ProvenanceSettings | null;
  /** The checkpoint of the last batch written, while it is under way. */
  #checkpointing: Promise<CheckpointOutcome> | null = null;
  /** Our provenance header for this partition's records; null when not exactly-once. */
  readonly #stamp: ProvenanceStamp | null;
  /** Which source log the checkpoints belong to (see source-continuity.ts). */
  #sourceTopicId: string | null = null;
  /** Leader epoch of the last batch read up to #nextOffset; null when unknown. */
  #leaderEpoch: number | null;

  constructor(deps: PumpDeps, settings: PumpSettings, held: HeldLease) {
    this.#deps = deps;
    this.#settings = settings;
    this.#held = held;
    this.#checkpoint = held.lease.checkpoint;
    this.#leaderEpoch = held.lease.sourceLeaderEpoch ?? null;
    this.#provenance = settings.provenance ?? null;
    if (this.#provenance !== null && deps.targetTail === undefined) {
      throw new ReplicatorError(
        "CONFIG_INVALID",
        "provenance needs a reader and admin of the target cluster",
      );
    }
    const { lease, route } = held;
    this.#stamp = this.#provenance === null ? null : stampFor(this.#provenance, route.source.partition);
    this.#tail =
      this.#provenance === null || deps.targetTail === undefined
        ? null
        : new TargetTail(
            deps.targetTail,
            route.source,
            route.target,
            this.#provenance,
            // A position is only meaningful with the checkpoint it was stored with.
            lease.checkpoint === null ? null : (lease.targetOffset ?? null),
          );
  }

  get status(): PumpStatus {
    return {
      records: this.#records,
      bytes: this.#bytes,
      nextOffset: this.#nextOffset,
      checkpoint: this.#checkpoint,
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
      if ((await this.#checkpointSettled()) === "lost" && this.#stopReason !== "error") {
        this.#stopReason = "lease-lost";
      }
    } catch (error) {
      if (this.#stopReason !== "error") this.#fail(error);
    }
    await this.#flushCheckpoint();
    if (this.#stopReason === "lease-lost") {
      this.#deps.logger.warn("lease lost, partition stopped", this.#fields());
    } else {
      this.#deps.logger.info("partition stopped", { ...this.#fields(), reason: this.#stopReason });
    }
    return this.status;
  }

  async #loop(): Promise<PumpStopReason> {
    const held = this.#held;
    // First of all, fence the partition's earlier writers (a former holder may be frozen mid-write
    // and wake at any time): from here on only our writes can land, so what the target shows
    // when we look at it below cannot grow behind our back.
    const fenced = await this.#fence();
    if (fenced !== "ok") return fenced;
    // Before anything is read: is the checkpoint still about the log the source has now?
    const identity = await resumeContinuity(
      this.#deps,
      held.route.source,
      held,
      (error, attempt, what) => this.#retryable(error, attempt, what),
      this.#tail,
    );
    if (identity === undefined) return this.#stopOrLost();
    this.#sourceTopicId = identity.topicId;
    this.#checkpoint = held.lease.checkpoint;
    this.#leaderEpoch = held.lease.sourceLeaderEpoch ?? null;
    let start = held.lease.checkpoint ?? (await this.#initialOffset());
    if (start === null) return this.#stopOrLost();
    const resumed = await this.#recover(start);
    if (resumed === null) return this.#stopOrLost();
    const recovered = resumed > start;
    start = resumed;
    this.#nextOffset = start;
    // Pin where a "latest" start began: without it a crash before the first batch would make
    // the next holder start at a later log end and skip what arrived in between. After a
    // recovery, pin what the target tail showed, so the next holder need not read it again.
    // In exactly-once mode a lease without a stored target position gets one before anything
    // is written: otherwise the next holder would not know where to look for our writes, and
    // would copy them again.
    const unpositioned =
      this.#tail !== null && (held.lease.checkpoint === null || (held.lease.targetOffset ?? null) === null);
    if (unpositioned) {
      const pinned = await this.#storeCheckpointBeforeWriting(start);
      if (pinned !== "ok") return pinned;
    } else if (held.lease.checkpoint === null || recovered) {
      const pinned = await this.#storeCheckpoint(start);
      if (pinned === "lost") return "lease-lost";
    }

    const ahead = new ReadAhead<FetchOutcome>(
      async (offset) => {
        const outcome = await this.#fetch(offset);
        return outcome.kind === "fetched"
          ? { next: outcome.fetched.nextOffset, bytes: outcome.fetched.bytes, value: outcome }
          : { next: null, bytes: 0, value: outcome };
      },
      start,
      READ_AHEAD,
      this.#deps.readAheadBudget ?? null,
    );
    try {
      return await this.#copy(ahead);
    } finally {
      ahead.close();
    }
  }

  async #copy(ahead: ReadAhead<FetchOutcome>): Promise<PumpStopReason> {
    const held = this.#held;
    for (;;) {
      const outcome = await this.#untilStopped(ahead.next());
      if (outcome.kind === "stopped") return this.#stopOrLost();
      if (outcome.kind === "failed") throw outcome.error;
      const { fetched } = outcome;

      if (fetched.records.length > 0) {
        const gate = await this.#leaseAllowsWrite();
        if (gate !== "ok") return gate;
        const written = await this.#write(this.#outgoing(fetched.records));
        if (written !== "ok") return written;
        this.#records += fetched.records.length;
        this.#bytes += fetched.bytes;
        this.#deps.metrics.batchCopied({
          ...this.#held.route.source,
          records: fetched.records.length,
          bytes: fetched.bytes,
          nextOffset: fetched.nextOffset,
        });
      }
      this.#nextOffset = fetched.nextOffset;
      if (fetched.leaderEpoch !== undefined && fetched.leaderEpoch >= 0)
        this.#leaderEpoch = fetched.leaderEpoch;

      // The previous checkpoint ran while this batch was written; checkpoints stay in order.
      if ((await this.#checkpointSettled()) === "lost") return "lease-lost";
      // Also when only control batches or compaction gaps were skipped: no write, but progress.
      if (fetched.nextOffset > (this.#checkpoint ?? -1)) this.#startCheckpoint(fetched.nextOffset);
      const atEnd = fetched.nextOffset >= fetched.highWatermark;
      // Not overlapped when caught up (nothing to overlap with), when handing over (which must
      // follow the checkpoint), or in at-least-once mode, where a crash would then repeat two
      // batches instead of one; in exactly-once mode the target tail makes either harmless.
      if (atEnd || held.signal.aborted || this.#tail === null) {
        if ((await this.#checkpointSettled()) === "lost") return "lease-lost";
      }
      this.#caughtUp = atEnd && this.#checkpoint === fetched.nextOffset;
      if (held.signal.aborted) return this.#stopOrLost();
    }
  }

  /**
   * Checkpoints the progress of the batch just written; in exactly-once mode the next batch is
   * written meanwhile, which takes the store's round trip off the copy path. Safe because a
   * checkpoint covers only acknowledged records and carries the target position taken when it
   * starts, whatever is in flight, and because writing does not depend on it: a write starts
   * only while the lease is valid by our own clock (#leaseAllowsWrite).
   */
  #startCheckpoint(offset: number): void {
    this.#checkpointing = this.#storeCheckpoint(offset).catch((error: unknown) => ({ error }));
  }

  /** Waits for the checkpoint in flight, if any; throws what it threw. */
  async #checkpointSettled(): Promise<"ok" | "lost"> {
    const pending = this.#checkpointing;
    if (pending === null) return "ok";
    this.#checkpointing = null;
    const outcome = await pending;
    if (typeof outcome === "object") throw outcome.error;
    return outcome === "lost" ? "lost" : "ok";
  }

  /**
   * Exactly-once mode: reads the target from the lease's stored position and returns the offset
   * to resume at, after the last record of this partition that already landed there (a write
   * whose checkpoint never made it). Null when stopped first.
   */
  async #recover(start: number): Promise<number | null> {
    const tail = this.#tail;
    if (tail === null) return start;
    for (let attempt = 0; ; attempt++) {
      try {
        const read = await tail.refresh();
        const resume = Math.max(start, tail.landed + 1);
        if (resume > start) {
          this.#deps.logger.info("records of an unfinished write found in the target; resuming after them", {
            ...this.#fields(),
            checkpoint: start,
            resumeAt: resume,
            targetRecordsRead: read,
          });
        }
        return resume;
      } catch (error) {
        if (!(await this.#retryable(error, attempt, "reading the target tail failed"))) throw error;
        if (this.#held.signal.aborted) return null;
      }
    }
  }

  /** What is written for a fetched batch: loopbacks dropped (the writer appends our provenance). */
  #outgoing(records: readonly MirrorRecord[]): readonly MirrorRecord[] {
    const provenance = this.#provenance;
    if (provenance === null) return records;
    return records.some((r) => isLoopback(r, provenance))
      ? records.filter((r) => !isLoopback(r, provenance))
      : records;
  }

  /** Resolves the start offset from the source's log bounds; null when stopped first. */
  async #initialOffset(): Promise<number | null> {
    const { topic, partition } = this.#held.route.source;
    for (let attempt = 0; ; attempt++) {
      try {
        const offsets = await this.#deps.sourceAdmin.listOffsets(topic, [partition]);
        const found = offsets.find((o) => o.partition === partition);
        if (found === undefined) {
          throw new ReplicatorError("KAFKA_FATAL", `source did not list offsets of ${topic}/${partition}`, {
            details: { topic, partition },
          });
        }
        return this.#settings.startFrom === "earliest" ? found.logStartOffset : found.logEndOffset;
      } catch (error) {
        if (!(await this.#retryable(error, attempt, "listing source offsets failed"))) throw error;
        if (this.#held.signal.aborted) return null;
      }
    }
  }

  /** Never rejects, so a read-ahead fetch that is abandoned cannot become an unhandled rejection. */
  async #fetch(offset: number): Promise<FetchOutcome> {
    const { source } = this.#held.route;
    let from = offset;
    for (let attempt = 0; ; attempt++) {
      if (this.#held.signal.aborted) return { kind: "stopped" };
      try {
        const fetched = await this.#deps.source.fetch(source, from, this.#settings.batch);
        return { kind: "fetched", fetched };
      } catch (error) {
        if (isReplicatorError(error, "OFFSET_OUT_OF_RANGE")) {
          try {
            from = await this.#outOfRange(from);
          } catch (inner) {
            if (!(await this.#retryable(inner, attempt, "listing source offsets failed"))) {
              return { kind: "failed", error: inner };
            }
          }
        } else if (!(await this.#retryable(error, attempt, "fetch failed"))) {
          return { kind: "failed", error };
        }
      }
    }
  }

  /**
   * Below the log start, retention deleted records we had not copied yet: resume at the log
   * start and report the loss loudly. Above the log end the checkpoint is from another log
   * (topic re-created, unclean leader election): rewinding silently would re-copy or skip
   * unknown data, so the partition stops. Inside the log it was transient: retry.
   */
  async #outOfRange(offset: number): Promise<number> {
    const { topic, partition } = this.#held.route.source;
    const offsets = await this.#deps.sourceAdmin.listOffsets(topic, [partition]);
    const bounds = offsets.find((o) => o.partition === partition);
    if (bounds === undefined) {
      throw new ReplicatorError("KAFKA_FATAL", `source did not list offsets of ${topic}/${partition}`, {
        details: { topic, partition },
      });
    }
    if (offset < bounds.logStartOffset) {
      const lost = { topic, partition, from: offset, to: bounds.logStartOffset };
      this.#deps.metrics.recordsLost(lost);
      this.#deps.logger.error("source records deleted before they were copied; resuming at log start", {
        ...lost,
        toExclusive: true,
      });
      return bounds.logStartOffset;
    }
    if (offset > bounds.logEndOffset) {
      throw new ReplicatorError(
        "OFFSET_OUT_OF_RANGE",
        `checkpoint ${offset} is beyond the log end of ${topic}/${partition}`,
        {
          details: {
            topic,
            partition,
            offset,
            logStartOffset: bounds.logStartOffset,
            logEndOffset: bounds.logEndOffset,
          },
        },
      );
    }
    await this.#deps.clock.sleep(this.#backoff(0), this.#held.signal);
    return offset;
  }

  /**
   * Writes `records`, each request bounded by the lease (the writer's deadline). A write cut at
   * the deadline landed a prefix: that is checkpointed, and the rest waits at the lease gate
   * for a renewal, or the pump stops there.
   */
  async #write(records: readonly MirrorRecord[]): Promise<Gate> {
    const tail = this.#tail;
    let remaining = records;
    for (let attempt = 0; remaining.length > 0; attempt++) {
      try {
        let pending = remaining;
        if (tail !== null) {
          // An uncertain earlier attempt may have landed some of these records; those are not
          // written again. Fenced first: the attempt's transaction is aborted if still open, and
          // nothing of it can become visible after the look.
          if (tail.uncertain) {
            // Only a holder may fence: a worker that woke past its lease (frozen mid-write)
            // would bump the epoch of the worker that took over and abort its transaction.
            const allowed = await this.#leaseAllowsWrite();
            if (allowed !== "ok") return allowed;
            await this.#deps.target.fence(this.#held.route.target, () => this.#writeDeadline());
            await tail.refresh();
          }
          pending = remaining.filter((r) => r.offset > tail.landed);
        }
        if (pending.length === 0) return "ok";
        const gate = await this.#leaseAllowsWrite();
        if (gate !== "ok") return gate;
        let result: WriteResult;
        try {
          result = await this.#deps.target.write(this.#held.route.target, pending, this.#stamp, () =>
            this.#writeDeadline(),
          );
        } catch (error) {
          tail?.writeFailed();
          throw error;
        }
        const landed = pending.slice(0, result.acknowledged);
        const last = landed.at(-1)?.offset ?? -1;
        if (landed.length > 0) tail?.acknowledged(result.baseOffset, landed.length, last);
        if (landed.length === pending.length) return "ok";
        remaining = remaining.filter((r) => r.offset > last);
        if (landed.length === 0) {
          // Nothing fitted before the lease's end (a margin shorter than a request): wait for it
          // to change rather than ask again at once.
          await this.#deps.clock.sleep(this.#settings.leasePollMs ?? 100, this.#held.signal);
        } else {
          this.#deps.logger.info("write cut at the lease deadline; checkpointing what landed", {
            ...this.#fields(),
            acknowledged: landed.length,
            records: pending.length,
          });
          // In order after the checkpoint of the batch before; the rest of this batch follows.
          if ((await this.#checkpointSettled()) === "lost") return "lease-lost";
          this.#nextOffset = last + 1;
          this.#startCheckpoint(last + 1);
        }
      } catch (error) {
        if (isReplicatorError(error, "PRODUCER_FENCED")) {
          // Another holder fenced our producer: whatever our lease says, the partition is theirs.
          this.#deps.logger.warn("write refused: another holder fenced this partition", {
            ...this.#fields(),
            error: error.message,
          });
          this.#held.markLost();
          return "lease-lost";
        }
        if (!(await this.#retryable(error, attempt, "write failed"))) throw error;
      }
    }
    return "ok";
  }

  /**
   * TargetWriter.fence, retried while it fails transiently. Only a holder may fence, as in
   * #write: a worker that reaches this past its lease (frozen after its claim) would bump the
   * epoch of the worker that took over and abort its transaction.
   */
  async #fence(): Promise<Gate> {
    for (let attempt = 0; ; attempt++) {
      const allowed = await this.#leaseAllowsWrite();
      if (allowed !== "ok") return allowed;
      try {
        await this.#deps.target.fence(this.#held.route.target, () => this.#writeDeadline());
        return "ok";
      } catch (error) {
        if (!(await this.#retryable(error, attempt, "fencing the target partition's earlier writers failed")))
          throw error;
      }
    }
  }

  /**
   * The writer's deadline: every request of a write must be finished by the lease's expiry, read
   * anew before each request so a renewal during the write extends it. Once the lease is lost,
   * nothing more may be sent.
   */
  #writeDeadline(): number {
    const held = this.#held;
    return held.lost ? Number.NEGATIVE_INFINITY : held.expiresAt;
  }

  /**
   * Never start a write with less than the safety margin left on the lease: the writer then stops
   * sending at the lease's expiry (#writeDeadline), and a write must be able to get at least a
   * request and its resend through. After expiry another worker may hold the partition, and two
   * writers would interleave. Short of time, wait for the renewer to extend the lease, unless
   * the expiry already sits at the hard deadline.
   */
  async #leaseAllowsWrite(): Promise<Gate> {
    const held = this.#held;
    const margin = this.#settings.writeSafetyMarginMs;
    for (;;) {
      if (held.lost) return "lease-lost";
      if (held.signal.aborted) return "stopped";
      const now = this.#deps.clock.now();
      const { expiresAt } = held;
      if (now + margin <= expiresAt) return "ok";
      if (expiresAt >= held.hardDeadline) return "deadline";
      if (now >= expiresAt) return "lease-expired";
      await this.#deps.clock.sleep(this.#settings.leasePollMs ?? 100, held.signal);
    }
  }

  async #storeCheckpoint(offset: number): Promise<"ok" | "lost" | "deferred"> {
    const held = this.#held;
    try {
      // Writes are sequential and none is under way here, so the tail's position is the one
      // that belongs to this checkpoint (see target-tail.ts).
      const position = this.#tail?.position ?? null;
      // Taken now, like the position: the epoch of the batch that ends at `offset`.
      const source = { topicId: this.#sourceTopicId, leaderEpoch: this.#leaderEpoch };
      held.update(
        await this.#deps.store.checkpoint(
          held.lease,
          offset,
          this.#deps.clock.now(),
          position === null ? undefined : position,
          source,
        ),
      );
      this.#checkpoint = offset;
      return "ok";
    } catch (error) {
      if (isReplicatorError(error, "LEASE_LOST")) {
        held.markLost();
        return "lost";
      }
      if (isReplicatorError(error) && error.retryable) {
        // Copying may go on while the lease is valid by our clock; the next checkpoint carries
        // this offset too, because a checkpoint covers everything before it.
        this.#deps.logger.warn("checkpoint deferred", { ...this.#fields(), offset, code: error.code });
        return "deferred";
      }
      throw error;
    }
  }

  /** Retries a deferred checkpoint until the store takes it; nothing is written meanwhile. */
  async #storeCheckpointBeforeWriting(offset: number): Promise<Gate> {
    for (let attempt = 0; ; attempt++) {
      const result = await this.#storeCheckpoint(offset);
      if (result === "ok") return "ok";
      if (result === "lost") return "lease-lost";
      const held = this.#held;
      if (held.signal.aborted) return held.lost ? "lease-lost" : "stopped";
      if (this.#deps.clock.now() >= held.expiresAt) return "lease-expired";
      await this.#deps.clock.sleep(this.#backoff(attempt), held.signal);
    }
  }

  /** After the loop: one last try for progress a store outage kept from being recorded. */
  async #flushCheckpoint(): Promise<void> {
    const next = this.#nextOffset;
    if (next === null || this.#held.lost || next <= (this.#checkpoint ?? -1)) return;
    try {
      await this.#storeCheckpoint(next);
    } catch (error) {
      this.#deps.logger.warn("final checkpoint failed", { ...this.#fields(), ...describe(error) });
    }
  }

  async #retryable(error: unknown, attempt: number, what: string): Promise<boolean> {
    if (!isReplicatorError(error) || !error.retryable || this.#held.signal.aborted) return false;
    this.#deps.logger.warn(what, { ...this.#fields(), code: error.code, attempt, details: error.details });
    await this.#deps.clock.sleep(this.#backoff(attempt), this.#held.signal);
    return true;
  }

  #backoff(attempt: number): number {
    const { initialMs, maxMs } = this.#settings.retry ?? DEFAULT_RETRY;
    return Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 20));
  }

  /** A caught-up fetch may long-poll for maxWaitMs; a stop must not wait for it. */
  #untilStopped(pending: Promise<FetchOutcome>): Promise<FetchOutcome> {
    const signal = this.#held.signal;
    if (signal.aborted) return Promise.resolve({ kind: "stopped" });
    return new Promise((resolve) => {
      const onAbort = () => resolve({ kind: "stopped" });
      signal.addEventListener("abort", onAbort, { once: true });
      void pending.then((outcome) => {
        signal.removeEventListener("abort", onAbort);
        resolve(outcome);
      });
    });
  }

  #stopOrLost(): PumpStopReason {
    return this.#held.lost ? "lease-lost" : "stopped";
  }

  #fail(error: unknown): void {
    const failure = isReplicatorError(error)
      ? error
      : new ReplicatorError("KAFKA_FATAL", "unexpected error in partition pump", { cause: error });
    this.#error = failure;
    this.#stopReason = "error";
    this.#caughtUp = false;
    const { topic, partition } = this.#held.route.source;
    this.#deps.metrics.partitionError({ topic, partition, code: failure.code });
    this.#deps.logger.error("partition stopped on error", { ...this.#fields(), ...describe(failure) });
  }

  #fields(): Record<string, unknown> {
    const { source, target } = this.#held.route;
    return {
      topic: source.topic,
      partition: source.partition,
      targetTopic: target.topic,
      leaseCounter: this.#held.lease.counter,
    };
  }
}

function describe(error: unknown): Record<string, unknown> {
  if (isReplicatorError(error)) return { code: error.code, error: error.message, details: error.details };
  return { error: error instanceof Error ? error.message : String(error) };
}
