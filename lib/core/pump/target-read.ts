/**
 * Reading one target partition READ_COMMITTED up to an end fixed in advance: what the
 * exactly-once tail look (target-tail.ts) and consumer-group offset translation
 * (offsets/translate.ts) both do, neither allowed to stop short of that end.
 *
 * READ_COMMITTED never returns anything at or beyond the last stable offset (LSO: the start of
 * the oldest open transaction of any producer), our own non-transactional records included; the
 * reader reports the LSO as its high watermark. So the end a read must reach, its goal, is fixed
 * when it starts: the high watermark then (targetBounds: ListOffsets, read_uncommitted). It is
 * reached once the LSO has passed it. Chasing the high watermark would never end under a
 * producer with overlapping transactions (it is always beyond the LSO); stopping at the LSO would
 * miss whatever of ours sits beyond it. While the LSO is below the goal a fetch at the LSO makes
 * no progress: fetchTowards then fails with TARGET_TRANSACTION_OPEN, and the caller tries again
 * later from where it got to, towards the same goal. How long that takes is bounded by the
 * transaction: its producer commits or aborts it, or the broker aborts it after that producer's
 * transaction.timeout.ms.
 */
import { ReplicatorError } from "../../errors.js";
import type { FetchLimits, FetchProgress, PartitionOffsets, TopicPartition } from "../model.js";
import type { ClusterAdmin } from "../ports.js";

/** Large fetches: a target read goes through every record, and none waits for new data. */
const TARGET_SCAN_LIMITS: FetchLimits = {
  maxRecords: 10_000,
  maxBytes: 4 * 1024 * 1024,
  maxWaitMs: 0,
};

/** The target partition's log start and high watermark (the goal of a read that starts now). */
export async function targetBounds(admin: ClusterAdmin, target: TopicPartition): Promise<PartitionOffsets> {
  const { topic, partition } = target;
  const found = (await admin.listOffsets(topic, [partition])).find((o) => o.partition === partition);
  if (found === undefined) {
    throw new ReplicatorError("KAFKA_RETRIABLE", `target did not list offsets of ${topic}/${partition}`, {
      details: { topic, partition },
    });
  }
  return found;
}

/**
 * One fetch from `offset` (below `goal`) that gets somewhere. OFFSET_OUT_OF_RANGE passes
 * through. `details` are the caller's log fields, added to an error's.
 */
export async function fetchTowards<F extends FetchProgress>(
  read: (offset: number, limits: FetchLimits) => Promise<F>,
  target: TopicPartition,
  offset: number,
  goal: number,
  details: Record<string, unknown> = {},
): Promise<F> {
  const fetched = await read(offset, TARGET_SCAN_LIMITS);
  if (fetched.nextOffset > offset) return fetched;
  // Reading READ_COMMITTED, the end the reader reports is the LSO.
  const lso = fetched.highWatermark;
  const where = `${target.topic}/${target.partition}`;
  const facts = { ...details, targetTopic: target.topic, targetPartition: target.partition, offset, goal };
  if (lso > offset) {
    // Not a transaction: the reader could have read on (a fault of the broker or the reader).
    throw new ReplicatorError("KAFKA_RETRIABLE", `no progress reading target ${where} at offset ${offset}`, {
      details: { ...facts, lastStableOffset: lso },
    });
  }
  throw new ReplicatorError(
    "TARGET_TRANSACTION_OPEN",
    `target ${where} has an open transaction at offset ${lso}: records up to ${goal} are not readable ` +
      "until it ends. Wait for its producer to commit or abort it, or for the broker to abort it " +
      "after that producer's transaction.timeout.ms",
    { details: { ...facts, lastStableOffset: lso } },
  );
}
