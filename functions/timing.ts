/**
 * The timing of overlapping scheduled runs (README "Timing"): every tick T each worker slot's
 * rule starts a run; the run copies for the whole tick, and from T + DRAIN_DELAY_MS after its
 * scheduled start it drains, handing its partitions to the next tick's run of its slot, which
 * started at T and has heartbeated by then. The function's timeout leaves room for the handoffs
 * and the old run's wind-down after that:
 *
 *   timeout = T + DRAIN_DELAY_MS + HANDOFF_WINDOW_MS + WRITE_STOP_MS + RUN_SAFETY_MARGIN_MS
 *           = T + 10 s + 30 s + 30 s + 10 s = T + 80 s   (at most 900 s: ticks of 1..13 minutes)
 *
 * The hard deadline still comes from the remaining-time clock: remaining - RUN_SAFETY_MARGIN_MS;
 * writes stop WRITE_STOP_MS before it, so the drain has HANDOFF_WINDOW_MS to move every
 * partition before the run releases what is left, as before.
 */

/** Lambda's longest timeout. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
/**
 * After the successor's scheduled start, before the run drains: EventBridge starts a rule's
 * target within seconds, a cold start with secrets takes a few more, then the successor
 * heartbeats (announces itself in the lease table).
 */
export const DRAIN_DELAY_MS = 10_000;
/** Time the drain has to hand every partition over before writes stop. */
export const HANDOFF_WINDOW_MS = 30_000;
/**
 * Writes stop this long before the hard deadline: writeSafetyMarginMs, 2 x target.requestTimeoutMs
 * at the default 15 s. A longer request timeout eats into HANDOFF_WINDOW_MS.
 */
export const WRITE_STOP_MS = 30_000;
/**
 * Time kept free after the worker's deadline: the worker finishes in-flight batches, checkpoints
 * and releases its leases just after the deadline, then metrics are flushed. Writes already stop
 * writeSafetyMarginMs before the deadline, so this only covers DynamoDB calls and the flush.
 */
export const RUN_SAFETY_MARGIN_MS = 10_000;
/** How much longer than its tick a run may last: the overlap with the next tick's run. */
export const RUN_OVERLAP_MS = DRAIN_DELAY_MS + HANDOFF_WINDOW_MS + WRITE_STOP_MS + RUN_SAFETY_MARGIN_MS;

/** The replicate function's timeout for a tick of `minutes`. */
export function replicateTimeoutSeconds(minutes: number): number {
  return minutes * 60 + RUN_OVERLAP_MS / 1_000;
}

/** Ticks whose overlapping runs fit in Lambda's 15 minutes: 1..13. */
export const OVERLAPPING_TICK_MINUTES = Array.from({ length: 15 }, (_, i) => i + 1).filter(
  (m) => replicateTimeoutSeconds(m) <= LAMBDA_MAX_TIMEOUT_SECONDS,
);

/** When a run that was scheduled at `scheduledAt` starts draining. */
export function drainAtFor(scheduledAt: number, tickMs: number): number {
  return scheduledAt + tickMs + DRAIN_DELAY_MS;
}

/** What a worker slot's rule sends: its slot, and EventBridge's scheduled time of the tick. */
export interface ScheduleInput {
  /** 1..Workers; null when the event names none (a manual invoke). */
  readonly slot: number | null;
  /** Epoch ms of the tick this run belongs to; null when the event carries no time. */
  readonly scheduledAt: number | null;
}

/** Reads a rule's input; anything else (a manual test invoke) gives nulls, never throws. */
export function scheduleInput(event: unknown): ScheduleInput {
  if (typeof event !== "object" || event === null) return { slot: null, scheduledAt: null };
  const { worker, time } = event as { worker?: unknown; time?: unknown };
  const slot = typeof worker === "number" && Number.isInteger(worker) && worker >= 1 ? worker : null;
  const parsed = typeof time === "string" ? Date.parse(time) : Number.NaN;
  return { slot, scheduledAt: Number.isFinite(parsed) ? parsed : null };
}
