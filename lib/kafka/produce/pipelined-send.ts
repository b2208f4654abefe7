/**
 * One pipelined attempt at a group of a write's batches: up to five, back to back on the leader's
 * connection, as Kafka's idempotent producer allows. The broker appends a producer's batches to a
 * partition only in sequence order, so whatever lands is a prefix of the group; the writer
 * (target-writer.ts) sends what did not land one batch at a time.
 */
import { partitionKey, type TopicPartition } from "../../core/model.js";
import type { Logger } from "../../core/ports.js";
import type { ProvenanceStamp } from "../../core/provenance.js";
import type { RequestBody } from "../wire/cluster-client.js";
import { KafkaErrorCode } from "../wire/error-codes.js";
import { type ProduceBatch, recordsIn } from "./produce-batch.js";
import { isLanded, isUncertain } from "./produce-outcome.js";
import type { Leader, ProducerSession } from "./producer-session.js";
import { type ProducerIdentity, sequenceAfter } from "./producer-state.js";

/** What one pipelined attempt achieved. */
export interface Pipelined {
  /** The session the group was (or was to be) sent under; its resends keep it. */
  readonly identity: ProducerIdentity | undefined;
  /** Leading batches that landed. */
  readonly landed: number;
  readonly baseOffset: number;
  /** Per batch: it may be in the log although no answer says so. */
  readonly uncertain: readonly boolean[];
}

export const NOT_PIPELINED: Pipelined = { identity: undefined, landed: 0, baseOffset: -1, uncertain: [] };

export interface PipelineContext {
  readonly session: ProducerSession;
  /** Until when InitProducerId may be retried if the partition has no identity yet. */
  readonly identityDeadline: number;
  /** A request sent now is answered, or has timed out, by the write's deadline. */
  readonly fits: () => boolean;
  readonly now: () => number;
  readonly logger: Logger | undefined;
}

/**
 * Sends `group` if it can finish before the deadline. Never throws: whatever did not land is left
 * to the one-by-one path, with a note of which batches may have landed anyway.
 */
export async function sendPipelined(
  context: PipelineContext,
  tp: TopicPartition,
  group: readonly ProduceBatch[],
  stamp: ProvenanceStamp | null,
): Promise<Pipelined> {
  const { session } = context;
  if (session.isClosed) return NOT_PIPELINED;
  let identity: ProducerIdentity;
  let leader: Leader;
  try {
    identity = await session.identity(tp, context.identityDeadline);
    leader = await session.leader(tp);
  } catch {
    return NOT_PIPELINED;
  }
  const key = partitionKey(tp);
  const sequences: number[] = [];
  const bodies: RequestBody[] = [];
  let sequence = session.state(tp).nextSequence(key, identity);
  for (const batch of group) {
    sequences.push(sequence);
    bodies.push(await session.body(tp, batch, stamp, identity, sequence));
    sequence = sequenceAfter(sequence, recordsIn(batch));
  }
  // Checked after encoding, just before sending: none of these may be outstanding at the deadline.
  if (!context.fits()) return { ...NOT_PIPELINED, identity };
  context.logger?.debug("produce sent", {
    topic: tp.topic,
    partition: tp.partition,
    baseSequence: sequences[0] ?? 0,
    batches: group.length,
    at: context.now(),
  });
  // Queued in one turn, so they reach the broker in sequence order.
  const answers = await Promise.allSettled(bodies.map((body) => session.send(leader, tp, body)));
  // An acknowledged batch means every batch before it landed too, whatever their own answers said
  // (a timed-out request may have landed all the same).
  let landed = 0;
  answers.forEach((answer, k) => {
    if (answer.status === "fulfilled" && isLanded(answer.value.errorCode)) landed = k + 1;
  });
  const lastLanded = group[landed - 1];
  if (lastLanded !== undefined) {
    session.state(tp).acknowledged(key, identity, sequences[landed - 1] as number, recordsIn(lastLanded));
  }
  const first = answers[0];
  const baseOffset =
    landed > 0 && first?.status === "fulfilled" && first.value.errorCode === KafkaErrorCode.NONE
      ? first.value.baseOffset
      : -1;
  return { identity, landed, baseOffset, uncertain: answers.map(isUncertain) };
}
