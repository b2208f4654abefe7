/**
 * A partition lease this worker holds, and what its pump may do while holding it: when a write
 * may start (the lease gate), until when its requests must end, and how long a failed step is
 * retried (until the lease ends, by the one retry helper).
 */
import { describeError, isReplicatorError } from "../../errors.js";
import type { PartitionRoute } from "../plan/model.js";
import type { Clock, Lease, Logger, TargetWriter } from "../ports.js";
import { type BackoffPolicy, DEFAULT_BACKOFF, NO_JITTER, retryUntil } from "../retry.js";
import type { Gate, LeaseEnd } from "./model.js";

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

  /** Aborts when the pump must stop: worker shutdown, lease lost, or a handoff was requested. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /**
   * Takes the lease version the pump's own progress write (checkpoint, reset) returned. Those
   * writes are sequential, so this is the latest checkpoint; but a renewal runs beside them and
   * their answers may cross: a checkpoint answered after a renewal carries the older expiry and
   * maybe no handoff request yet. Both were written all the same, so keep the later expiry and
   * the request (within one holding a request is only ever added).
   */
  update(lease: Lease): void {
    this.#take(lease.counter === this.#lease.counter ? { ...lease, ...this.#newer(lease) } : lease);
  }

  /**
   * Takes a renewal's answer: only its expiry and a handoff request are news. Its checkpoint,
   * target position and offset map may predate a checkpoint answered before it, and the next
   * checkpoint builds on the held lease (a stale base would drop the pin from the offset map and
   * mark a later point its origin, which translates group offsets past records copied before it).
   */
  renewed(lease: Lease): void {
    this.#take(lease.counter === this.#lease.counter ? { ...this.#lease, ...this.#newer(lease) } : lease);
  }

  #newer(lease: Lease): Pick<Lease, "expiresAt" | "handoffTo"> {
    return {
      expiresAt: Math.max(lease.expiresAt, this.#lease.expiresAt),
      handoffTo: lease.handoffTo ?? this.#lease.handoffTo,
    };
  }

  #take(lease: Lease): void {
    this.#lease = lease;
    // Another worker asked for this lease: finish the batch in flight, checkpoint, then let the
    // worker release it. Stopping here, where every fresh lease version arrives, means the
    // request is honoured at the next renewal or checkpoint, whichever comes first.
    if (this.handoffRequested) this.#stop.abort();
  }

  /**
   * True once another worker asked for the lease. The lease is still ours: the worker hands it
   * over (releases it to them) when the pump has ended.
   */
  get handoffRequested(): boolean {
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

  /** Why the hold ended, once the signal aborted or the expiry passed. */
  end(): LeaseEnd {
    if (this.#lost) return "lease-lost";
    if (this.#stop.signal.aborted) return "stopped";
    return this.expiresAt >= this.hardDeadline ? "deadline" : "lease-expired";
  }

  /** Log fields naming this partition and lease version. */
  logFields(): Record<string, unknown> {
    const { source, target } = this.route;
    return {
      topic: source.topic,
      partition: source.partition,
      targetTopic: target.topic,
      leaseCounter: this.#lease.counter,
    };
  }
}

export interface LeaseGuardOptions {
  /** PumpSettings.writeSafetyMarginMs. */
  readonly writeSafetyMarginMs: number;
  /** PumpSettings.leasePollMs. @default 100 */
  readonly leasePollMs?: number;
  /** @default DEFAULT_BACKOFF */
  readonly retry?: BackoffPolicy;
}

/**
 * What the pump may do while it holds `held`: the lease gate before writes and fences, the
 * writer's deadline, and retrying a failed step for as long as the lease is held.
 */
export class LeaseGuard {
  readonly held: HeldLease;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #options: LeaseGuardOptions;

  constructor(held: HeldLease, clock: Clock, logger: Logger, options: LeaseGuardOptions) {
    this.held = held;
    this.#clock = clock;
    this.#logger = logger;
    this.#options = options;
  }

  /**
   * Never start a write with less than the safety margin left on the lease: the writer then stops
   * sending at the lease's expiry (writeDeadline), and a write must be able to get at least a
   * request and its resend through. After expiry another worker may hold the partition, and two
   * writers would interleave. Short of time, wait for the renewer to extend the lease, unless
   * the expiry already sits at the hard deadline.
   */
  async allowsWrite(): Promise<Gate> {
    const held = this.held;
    const margin = this.#options.writeSafetyMarginMs;
    for (;;) {
      if (held.lost) return "lease-lost";
      if (held.signal.aborted) return "stopped";
      const now = this.#clock.now();
      const { expiresAt } = held;
      if (now + margin <= expiresAt) return "ok";
      if (expiresAt >= held.hardDeadline) return "deadline";
      if (now >= expiresAt) return "lease-expired";
      await this.waitForRenewal();
    }
  }

  /**
   * The writer's deadline: every request of a write must be finished by the lease's expiry, read
   * anew before each request so a renewal during the write extends it. Once the lease is lost,
   * nothing more may be sent.
   */
  writeDeadline(): number {
    const held = this.held;
    return held.lost ? Number.NEGATIVE_INFINITY : held.expiresAt;
  }

  /**
   * At the end of the term, before the worker gives the lease up (stop, drain, handoff, release,
   * the run's end, a failed partition): ends the transaction a failed write left open, which
   * would hold every read_committed consumer of the target partition at its first record until
   * the next holder's fence or the transaction timeout. Only while the lease is ours, as any
   * fence: once lost, whoever took it fenced us (ending it) or will; past the lease's expiry
   * nothing may be sent, and we say that it is left open.
   */
  async endOpenTransaction(target: TargetWriter): Promise<void> {
    const fields = this.held.logFields();
    if (this.held.lost) return;
    try {
      const ended = await target.endOpenTransaction(this.held.route.target, () => this.writeDeadline());
      if (ended === "aborted") this.#logger.info("open transaction aborted before the lease goes", fields);
      if (ended === "no-time")
        this.#logger.warn("a failed write's transaction is left open: no time before the lease ends", fields);
    } catch (error) {
      this.#logger.warn("aborting a failed write's open transaction failed; it is left open", {
        ...fields,
        ...describeError(error),
      });
    }
  }

  /** Waits one lease poll interval (or until the pump must stop) for the lease to change. */
  waitForRenewal(): Promise<void> {
    return this.#clock.sleep(this.#options.leasePollMs ?? 100, this.held.signal);
  }

  /**
   * Runs `attempt` until it succeeds, retrying retryable failures with back-off while the lease
   * is held (see retryUntil). A non-retryable failure, or one that arrives after the pump was
   * told to stop, is thrown; a retryable one that outlasts the lease (stop, loss, expiry) ends
   * the step with the lease's end instead. Each retry is logged as `what`.
   */
  retry<T>(
    what: string | (() => string),
    attempt: (n: number) => Promise<T>,
    fields: Record<string, unknown> = {},
  ): Promise<T | LeaseEnd> {
    const held = this.held;
    // Retryable, whether or not the lease lets us try again: such a failure is never the
    // partition's error, it ends the step with the lease's end (stopped, lost, expired).
    let retryable = false;
    const retried = retryUntil(attempt, {
      clock: this.#clock,
      signal: held.signal,
      deadline: () => held.expiresAt,
      backoff: this.#options.retry ?? DEFAULT_BACKOFF,
      random: NO_JITTER,
      retryable: (error) => {
        retryable = isReplicatorError(error) && error.retryable;
        return retryable && !held.signal.aborted;
      },
      onRetry: (error, n) => {
        const message = typeof what === "string" ? what : what();
        // The cause with every retry: "fetch failed, attempt 9" alone sent operators guessing.
        this.#logger.warn(message, { ...held.logFields(), ...fields, ...describeError(error), attempt: n });
      },
    });
    return retried.catch((error: unknown) => {
      if (retryable) return held.end();
      throw error;
    });
  }
}
