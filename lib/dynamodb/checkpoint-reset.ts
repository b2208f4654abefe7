/**
 * The UpdateItem parts for what a checkpoint says about its source log (topic id, leader epoch)
 * and for a checkpoint reset (LeaseStore.resetCheckpoint), kept apart from lease-store.ts so the
 * store's methods stay readable.
 */
import type { AttributeValue, UpdateItemCommandInput } from "@aws-sdk/client-dynamodb";
import type { CheckpointResetReason, Lease, SourcePosition } from "../core/ports.js";
import { ReplicatorError } from "../errors.js";
import { expressionNames, HOLDING_UNEXPIRED, num } from "./lease-item.js";

type SourceAttr = "sourceTopicId" | "sourceLeaderEpoch";

interface SourceParts {
  /** ", #a = :a, ..." to append to a SET clause; "" when nothing is set. */
  readonly set: string;
  /** Attributes to remove (known to be unknown now); only resets use it. */
  readonly remove: readonly SourceAttr[];
  readonly names: readonly SourceAttr[];
  readonly values: Record<string, AttributeValue>;
}

/**
 * A checkpoint's source position as SET parts. Null fields are left as stored by a checkpoint
 * (an epoch unknown for one fetch does not erase the last known one) and removed by a reset.
 */
export function sourcePositionParts(source: SourcePosition | undefined): SourceParts {
  if (source === undefined) return { set: "", remove: [], names: [], values: {} };
  validate(source);
  const set: string[] = [];
  const remove: SourceAttr[] = [];
  const values: Record<string, AttributeValue> = {};
  if (source.topicId === null) remove.push("sourceTopicId");
  else {
    set.push(", #sourceTopicId = :sourceTopicId");
    values[":sourceTopicId"] = { S: source.topicId };
  }
  if (source.leaderEpoch === null) remove.push("sourceLeaderEpoch");
  else {
    set.push(", #sourceLeaderEpoch = :sourceLeaderEpoch");
    values[":sourceLeaderEpoch"] = num(source.leaderEpoch);
  }
  const names = (["sourceTopicId", "sourceLeaderEpoch"] as const).filter((a) => !remove.includes(a));
  return { set: set.join(""), remove, names, values };
}

export function resetCheckpointInput(
  held: Lease,
  holder: string,
  nextOffset: number,
  now: number,
  reason: CheckpointResetReason,
  position: { readonly targetOffset: number | null; readonly source: SourcePosition },
): Omit<UpdateItemCommandInput, "TableName" | "Key"> {
  if (!Number.isSafeInteger(nextOffset) || nextOffset < 0) {
    throw invalid(`nextOffset must be a non-negative safe integer, got ${nextOffset}`, { nextOffset });
  }
  if (held.checkpoint === null) {
    throw invalid("a lease without a checkpoint has nothing to reset", { reason });
  }
  const { targetOffset } = position;
  if (targetOffset !== null && (!Number.isSafeInteger(targetOffset) || targetOffset < 0)) {
    throw invalid(`targetOffset must be a non-negative safe integer or null, got ${targetOffset}`, {
      targetOffset,
    });
  }
  const source = sourcePositionParts(position.source);
  // A position paired with the old checkpoint would point exactly-once recovery at records the
  // reset made meaningless, so without a new one the old one goes.
  const remove = [...source.remove, ...(targetOffset === null ? (["targetOffset"] as const) : [])];
  const setTarget = targetOffset === null ? "" : ", #targetOffset = :targetOffset";
  const removeClause = remove.length === 0 ? "" : ` REMOVE ${remove.map((a) => `#${a}`).join(", ")}`;
  // Every attribute appears in SET or REMOVE: DynamoDB rejects names an expression does not use.
  return {
    UpdateExpression: `SET #checkpoint = :offset, #updatedAt = :now${setTarget}${source.set}${removeClause}`,
    ConditionExpression: `${HOLDING_UNEXPIRED} AND #checkpoint = :from`,
    ExpressionAttributeNames: expressionNames(
      "owner",
      "counter",
      "expiresAt",
      "checkpoint",
      "updatedAt",
      "targetOffset",
      "sourceTopicId",
      "sourceLeaderEpoch",
    ),
    ExpressionAttributeValues: {
      ":owner": { S: holder },
      ":counter": num(held.counter),
      ":now": num(now),
      ":offset": num(nextOffset),
      ":from": num(held.checkpoint),
      ...(targetOffset === null ? {} : { ":targetOffset": num(targetOffset) }),
      ...source.values,
    },
  };
}

function validate(source: SourcePosition): void {
  if (source.topicId === "") {
    throw invalid("source topic id must be a non-empty string or null", { topicId: source.topicId });
  }
  const epoch = source.leaderEpoch;
  if (epoch !== null && (!Number.isSafeInteger(epoch) || epoch < 0)) {
    throw invalid(`source leader epoch must be a non-negative integer or null, got ${epoch}`, {
      leaderEpoch: epoch,
    });
  }
}

function invalid(message: string, details: Record<string, unknown>): ReplicatorError {
  return new ReplicatorError("CONFIG_INVALID", `checkpoint: ${message}`, { details });
}
