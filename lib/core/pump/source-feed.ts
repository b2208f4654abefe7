/**
 * The source side of one held partition: fetches read ahead of the write in progress, each
 * retried while the lease is held, following the log start when retention deleted records
 * before they were copied.
 */
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import type { CopyMode, FetchLimits, PartitionOffsets, TopicPartition } from "../model.js";
import type { Clock, ClusterAdmin, Logger, ReplicationMetrics, SourceReader } from "../ports.js";
import { canMerge, type FetchedUnits, mergeFetched, unitsOfBatches, unitsOfRecords } from "./copy-units.js";
import type { LeaseGuard } from "./held-lease.js";
import type { LeaseEnd } from "./model.js";
import { logBounds } from "./pump-start.js";
import { type ChainLink, ReadAhead, type ReadAheadBudget } from "./read-ahead.js";

export interface SourceFeedDeps {
  readonly source: SourceReader;
  readonly clock: Clock;
  readonly sourceAdmin: ClusterAdmin;
  readonly logger: Logger;
  readonly metrics: ReplicationMetrics;
  readonly readAheadBudget?: ReadAheadBudget;
}

export type FetchOutcome =
  | { readonly kind: "fetched"; readonly fetched: FetchedUnits }
  /** The lease ended first (`reason`), or the pump was stopped while waiting (no reason). */
  | { readonly kind: "stopped"; readonly reason?: LeaseEnd }
  | { readonly kind: "failed"; readonly error: unknown };

/**
 * Fetch results read ahead of the write in progress, per partition: at least two keep reading
 * busy while a batch is written (one was not enough: the bench's pumps waited on fetches 60% of
 * their time); each is at most batch.maxBytes plus one source batch, and
 * PumpDeps.readAheadBudget bounds them across the worker.
 */
const READ_AHEAD = 2;

/** The most results read ahead per partition: more would save a write little. */
const MAX_READ_AHEAD = 8;

/**
 * Results read ahead, and the most fetches one write holds: as many full fetches as
 * writeMaxBytes holds, within READ_AHEAD..MAX_READ_AHEAD. A write of n fetches takes less than n
 * reads' time, or results are in when it starts and it waits for none; so with room for n
 * results, reading goes on while it is out. With less, a source no faster than the target would
 * wait for each write, and each write for the reads it waited for.
 */
export function readAheadDepth(limits: Pick<FetchLimits, "maxBytes">, writeMaxBytes: number): number {
  return Math.min(MAX_READ_AHEAD, Math.max(READ_AHEAD, Math.ceil(writeMaxBytes / limits.maxBytes)));
}

/** The reason a wait of withReady is over; a constant, as abort() would build a DOMException each time. */
const WAIT_OVER = new Error("wait over");

export class SourceFeed {
  readonly #deps: SourceFeedDeps;
  readonly #guard: LeaseGuard;
  readonly #limits: FetchLimits;
  readonly #ahead: ReadAhead<FetchOutcome>;
  readonly #copy: CopyMode;
  /** The most one write takes along (PumpSettings.writeMaxBytes); 0: one fetch per write. */
  readonly #writeMaxBytes: number;
  /** readAheadDepth: results read ahead, and the most fetches one write holds. */
  readonly #depth: number;
  /** Gives back the budget of results withReady took along (ReadAhead.takeReady). */
  readonly #takenAlong: (() => void)[] = [];

  constructor(
    deps: SourceFeedDeps,
    guard: LeaseGuard,
    limits: FetchLimits,
    start: number,
    copy: CopyMode,
    writeMaxBytes: number,
  ) {
    this.#deps = deps;
    this.#copy = copy;
    this.#guard = guard;
    this.#limits = limits;
    this.#writeMaxBytes = writeMaxBytes;
    this.#depth = readAheadDepth(limits, writeMaxBytes);
    this.#ahead = new ReadAhead<FetchOutcome>(
      (offset) => this.#fetch(offset),
      start,
      this.#depth,
      deps.readAheadBudget ?? null,
    );
  }

  /** The next fetch result in offset order. A caught-up fetch may long-poll for maxWaitMs; a stop must not wait for it. */
  next(): Promise<FetchOutcome> {
    // The write of what withReady took along is over.
    this.#releaseTaken();
    const signal = this.#guard.held.signal;
    if (signal.aborted) return Promise.resolve({ kind: "stopped" });
    const pending = this.#ahead.next();
    return new Promise((resolve) => {
      const onAbort = () => resolve({ kind: "stopped" });
      signal.addEventListener("abort", onAbort, { once: true });
      void pending.then((outcome) => {
        signal.removeEventListener("abort", onAbort);
        resolve(outcome);
      });
    });
  }

  /**
   * `fetched` and the results read after it, as one fetch, while together they hold at most
   * writeMaxBytes and readAheadDepth fetches: a write takes them along, so a partition that is
   * behind is copied in fewer, larger writes (each a transaction and a round of requests of its
   * own). What it takes stays charged to the read-ahead budget until the pump asks for more (or
   * closes).
   *
   * Results still on their way are waited for, batch.maxWaitMs in all, while the partition is
   * behind (its source holds more than this write, so such a fetch is answered at once), one
   * more fetch the size of the last would fit, and the read-ahead budget is not spent. Where
   * reading is slower than writing, nothing is in yet when a write starts, and each fetch was a
   * transaction of its own (bench --copy batches on the mock: 1,200 writes a GiB at
   * batch.maxBytes 1 MiB, about 300 with the wait). A fetch being retried delays the write by
   * the whole wait.
   */
  async withReady(fetched: FetchedUnits): Promise<FetchedUnits> {
    const maxBytes = this.#writeMaxBytes;
    let merged = fetched;
    // What the next fetch of a partition that is behind likely holds: as much as the last.
    let lastBytes = fetched.bytes;
    let waitUntil: number | null = null;
    let fetches = 1;
    const signal = this.#guard.held.signal;
    while (maxBytes > 0 && fetches < this.#depth && merged.units.length > 0 && !signal.aborted) {
      const fits = (f: FetchedUnits) =>
        f.units.length > 0 && merged.bytes + f.bytes <= maxBytes && canMerge(merged, f);
      const taken = this.#ahead.takeReady((o) => o.kind === "fetched" && fits(o.fetched));
      if (taken?.value.kind === "fetched") {
        this.#takenAlong.push(taken.release);
        merged = mergeFetched(merged, taken.value.fetched);
        lastBytes = taken.value.fetched.bytes;
        fetches++;
        continue;
      }
      const behind = merged.nextOffset < merged.highWatermark;
      if (!behind || merged.bytes + lastBytes > maxBytes) return merged;
      const onItsWay = this.#ahead.oldestOnItsWay();
      if (onItsWay === null) return merged;
      waitUntil ??= this.#deps.clock.now() + this.#limits.maxWaitMs;
      const left = waitUntil - this.#deps.clock.now();
      if (left <= 0 || !(await this.#arrives(onItsWay, left))) return merged;
    }
    return merged;
  }

  /** Whether `onItsWay` settles within `ms` and while the lease is held. */
  async #arrives(onItsWay: Promise<void>, ms: number): Promise<boolean> {
    const held = this.#guard.held.signal;
    const over = new AbortController();
    const stop = () => over.abort(WAIT_OVER);
    held.addEventListener("abort", stop, { once: true });
    try {
      return await Promise.race([
        onItsWay.then(() => !held.aborted),
        this.#deps.clock.sleep(ms, over.signal).then(() => false),
      ]);
    } finally {
      held.removeEventListener("abort", stop);
      over.abort(WAIT_OVER);
    }
  }

  close(): void {
    this.#releaseTaken();
    this.#ahead.close();
  }

  #releaseTaken(): void {
    for (const release of this.#takenAlong.splice(0)) release();
  }

  /**
   * Never rejects, so a read-ahead fetch that is abandoned cannot become an unhandled rejection.
   * The first attempt runs before retryUntil, which takes over from its failure: a fetch that
   * succeeds costs no more than the call, so the read-ahead keeps ahead of the writes.
   */
  async #fetch(offset: number): Promise<ChainLink<FetchOutcome>> {
    const { source } = this.#guard.held.route;
    if (this.#guard.held.signal.aborted) return ended({ kind: "stopped" });
    let from = offset;
    let what = "fetch failed";
    const attempt = async (): Promise<FetchedUnits> => {
      // Not a retry: after OFFSET_OUT_OF_RANGE below the log start, fetch again from there.
      for (;;) {
        what = "fetch failed";
        try {
          const reader = this.#deps.source;
          return this.#copy === "batches"
            ? unitsOfBatches(await reader.fetchBatches(source, from, this.#limits))
            : unitsOfRecords(await reader.fetch(source, from, this.#limits));
        } catch (error) {
          if (!isReplicatorError(error, "OFFSET_OUT_OF_RANGE")) throw error;
        }
        what = "listing source offsets failed";
        const bounds = await logBounds(this.#deps.sourceAdmin, source);
        what = "fetch failed";
        from = this.#outOfRange(source, from, bounds);
      }
    };
    let failed: unknown;
    try {
      return fetchedLink(await this.#paced(await attempt(), offset));
    } catch (error) {
      failed = error;
    }
    try {
      const retried = await this.#guard.retry(
        () => what,
        (n) => (n === 0 ? Promise.reject(failed) : attempt()),
      );
      if (typeof retried === "string") return ended({ kind: "stopped", reason: retried });
      return fetchedLink(await this.#paced(retried, offset));
    } catch (error) {
      return ended({ kind: "failed", error });
    }
  }

  /**
   * A broker that answers nothing below its high watermark (a quirk, or a test double) would have
   * the feed ask again at once, for ever; wait as a caught-up fetch would at the broker.
   */
  async #paced(fetched: FetchedUnits, offset: number): Promise<FetchedUnits> {
    if (madeNoProgress(fetched, offset))
      await this.#deps.clock.sleep(this.#limits.maxWaitMs, this.#guard.held.signal);
    return fetched;
  }

  /**
   * Below the log start, retention deleted records we had not copied yet: resume at the log
   * start and report the loss loudly. Above the log end the checkpoint is from another log
   * (topic re-created, unclean leader election): rewinding silently would re-copy or skip
   * unknown data, so the partition stops. Inside the log it was transient: a retryable error.
   */
  #outOfRange(tp: TopicPartition, offset: number, bounds: PartitionOffsets): number {
    const { topic, partition } = tp;
    const { logStartOffset, logEndOffset } = bounds;
    if (offset < logStartOffset) {
      const lost = { topic, partition, from: offset, to: logStartOffset };
      this.#deps.metrics.recordsLost(lost);
      this.#deps.logger.error("source records deleted before they were copied; resuming at log start", {
        ...lost,
        toExclusive: true,
      });
      return logStartOffset;
    }
    const details = { topic, partition, offset, logStartOffset, logEndOffset };
    if (offset > logEndOffset) {
      throw new ReplicatorError(
        "OFFSET_OUT_OF_RANGE",
        `checkpoint ${offset} is beyond the log end of ${topic}/${partition}`,
        { details },
      );
    }
    throw new ReplicatorError(
      "OFFSET_OUT_OF_RANGE",
      `offset ${offset} of ${topic}/${partition} was out of range`,
      {
        details,
        retryable: true,
      },
    );
  }
}

/** A caught-up fetch long-polls at the broker; one that moved nothing below the end must not spin either. */
function madeNoProgress(fetched: FetchedUnits, offset: number): boolean {
  return fetched.nextOffset <= offset && fetched.units.length === 0 && offset < fetched.highWatermark;
}

function fetchedLink(fetched: FetchedUnits): ChainLink<FetchOutcome> {
  return { next: fetched.nextOffset, bytes: fetched.bytes, value: { kind: "fetched", fetched } };
}

/** A result that ends the chain. */
function ended(outcome: FetchOutcome): ChainLink<FetchOutcome> {
  return { next: null, bytes: 0, value: outcome };
}
