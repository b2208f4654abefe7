/**
 * The GROUP_ADMIN_FAILED errors of the group admin (group-admin.ts, group-describe.ts): a
 * coordinator's error code for a group, or an answer that left the group out. Each names the
 * group, and is retryable as Kafka marks the code.
 */
import { ReplicatorError } from "../../errors.js";
import { kafkaError } from "../wire/error-codes.js";

export function groupRefusal(
  what: string,
  groupId: string,
  code: number,
  extra: Record<string, unknown> = {},
): ReplicatorError {
  const info = kafkaError(code);
  return new ReplicatorError("GROUP_ADMIN_FAILED", `${what} failed: ${info.name}`, {
    retryable: info.retriable,
    details: { groupId, kafkaErrorCode: code, kafkaError: info.name, ...extra },
  });
}

export function noAnswer(what: string, groupId: string): ReplicatorError {
  return new ReplicatorError("GROUP_ADMIN_FAILED", `${what}: the coordinator's answer left the group out`, {
    details: { groupId },
  });
}

/** A group id as messages show it: quoted, so an empty or odd id is visible. */
export function q(groupId: string): string {
  return JSON.stringify(groupId);
}
