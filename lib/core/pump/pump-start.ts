/**
 * Start-up of a partition the pump just took, before anything is read from the source:
 *   1. fence the partition's earlier writers on the target;
 *   2. exactly-once: look at the target tail, i.e. find whatever of an unfinished write already
 *      landed past the checkpoint;
 *   3. check the source still holds what was copied, up to the checkpoint or what step 2 found
 *      (source-continuity.ts), and reset the checkpoint where it does not;
 *   4. find the start offset: after what was copied, or the log start or end without a checkpoint;
 *   5. pin the start in the store where the next holder would otherwise not find it.
 * The pump runs it again, on the lease it holds, when its reads show a new leader epoch that
 * begins below what it read (an unclean leader election under a running copy).
 */
import { ReplicatorError } from "../../errors.js";
import type { PartitionOffsets, StartFrom, TopicPartition } from "../model.js";
import type { ClusterAdmin, TargetWriter } from "../ports.js";
import type { Checkpointer } from "./checkpointer.js";
import type { LeaseGuard } from "./held-lease.js";
import type { Gate, LeaseEnd } from "./model.js";
import { type ResumeDeps, resumeContinuity } from "./source-continuity.js";
import type { TargetTail } from "./target-tail.js";

export interface StartDeps extends ResumeDeps {
  readonly target: TargetWriter;
}

export interface PumpStart {
  readonly deps: StartDeps;
  readonly guard: LeaseGuard;
  readonly checkpointer: Checkpointer;
  /** Null: at-least-once mode. */
  readonly tail: TargetTail | null;
  readonly startFrom: StartFrom;
}

export interface Start {
  /** The first source offset to read. */
  readonly offset: number;
  /** A write of ours found in the target moved the start past the checkpoint. */
  readonly recovered: boolean;
  /** The source log diverged from the checkpoint, which was reset (source-continuity.ts). */
  readonly reset: boolean;
}

/** Steps 1-4: where to start reading, or how the lease ended first. */
export async function findStart(p: PumpStart): Promise<Start | LeaseEnd> {
  const held = p.guard.held;
  // First of all, fence the partition's earlier writers (a former holder may be frozen mid-write
  // and wake at any time): from here on only our writes can land, so what the target shows
  // when we look at it below cannot grow behind our back.
  const fenced = await fence(p);
  if (fenced !== "ok") return fenced;
  const looked = await lookAtTarget(p);
  if (looked !== "ok") return looked;
  // Before anything is read: is what we copied still in the log the source has now?
  const retry = <T>(what: string, attempt: () => Promise<T>) => p.guard.retry(what, attempt);
  const continuity = await resumeContinuity(p.deps, held.route.source, held, retry, p.tail);
  if (typeof continuity === "string") return continuity;
  p.checkpointer.sourceTopicId = continuity.identity.topicId;
  p.checkpointer.reload();
  const start = held.lease.checkpoint ?? (await initialOffset(p));
  if (typeof start === "string") return start;
  // After a reset the tail forgot what it found (restartAt), so this is the reset's offset.
  const resume = p.tail === null ? start : Math.max(start, p.tail.landed + 1);
  if (resume > start) {
    p.deps.logger.info("records of an unfinished write found in the target; resuming after them", {
      ...held.logFields(),
      checkpoint: start,
      resumeAt: resume,
    });
  }
  return { offset: resume, recovered: resume > start, reset: continuity.reset };
}

/**
 * Step 5. Pins where a "latest" start began: without it a crash before the first batch would
 * make the next holder start at a later log end and skip what arrived in between. After a
 * recovery, pins what the target tail showed, so the next holder need not read it again. In
 * exactly-once mode a lease without a stored target position gets one before anything is
 * written: otherwise the next holder would not know where to look for our writes, and would
 * copy them again. For the same reason, in batches mode, the lease lists the producer id the
 * fence gave before anything is written under it.
 */
export async function pinStart(p: PumpStart, start: Start): Promise<Gate> {
  const { lease } = p.guard.held;
  const unpositioned =
    p.tail !== null && (lease.checkpoint === null || (lease.targetOffset ?? null) === null);
  if (unpositioned) {
    const pinned = await p.checkpointer.storeBeforeWriting(start.offset);
    if (pinned !== "ok") return pinned;
  } else if (lease.checkpoint === null || start.recovered) {
    if ((await p.checkpointer.store(start.offset)) === "lost") return "lease-lost";
  }
  return p.checkpointer.storeProducerId();
}

/**
 * TargetWriter.fence, retried while it fails transiently. Only a holder may fence, as before a
 * write: a worker that reaches this past its lease (frozen after its claim) would bump the
 * epoch of the worker that took over and abort its transaction.
 */
async function fence(p: PumpStart): Promise<Gate> {
  const { guard } = p;
  return guard.retry("fencing the target partition's earlier writers failed", async (): Promise<Gate> => {
    const allowed = await guard.allowsWrite();
    if (allowed !== "ok") return allowed;
    await p.deps.target.fence(guard.held.route.target, () => guard.writeDeadline());
    return "ok";
  });
}

/** Resolves the start offset from the source's log bounds. */
function initialOffset(p: PumpStart): Promise<number | LeaseEnd> {
  return p.guard.retry("listing source offsets failed", async () => {
    const bounds = await logBounds(p.deps.sourceAdmin, p.guard.held.route.source);
    return p.startFrom === "earliest" ? bounds.logStartOffset : bounds.logEndOffset;
  });
}

/**
 * Exactly-once mode: reads the target from the lease's stored position, so the tail knows the
 * last record of this partition that already landed there (a write whose checkpoint never made
 * it).
 */
async function lookAtTarget(p: PumpStart): Promise<Gate> {
  const tail = p.tail;
  if (tail === null) return "ok";
  const looked = await p.guard.retry("reading the target tail failed", async () => {
    await tail.refresh();
    return "ok" as const;
  });
  return looked;
}

/** The source partition's log start and end. */
export async function logBounds(admin: ClusterAdmin, tp: TopicPartition): Promise<PartitionOffsets> {
  const { topic, partition } = tp;
  const offsets = await admin.listOffsets(topic, [partition]);
  const found = offsets.find((o) => o.partition === partition);
  if (found === undefined) {
    throw new ReplicatorError("KAFKA_FATAL", `source did not list offsets of ${topic}/${partition}`, {
      details: { topic, partition },
    });
  }
  return found;
}
