/**
 * Checks of the arguments the lease store is called with. A bad one is a bug in the caller, so it
 * is refused before anything is written, as CONFIG_INVALID naming the operation, the argument,
 * the value and what is allowed.
 */
import { ReplicatorError } from "../../errors.js";

/** The CONFIG_INVALID for a bad `argument` of `operation`, saying what is allowed. */
export function invalidArgument(
  operation: string,
  argument: string,
  value: unknown,
  allowed: string,
): ReplicatorError {
  return new ReplicatorError(
    "CONFIG_INVALID",
    `${operation}: ${argument} must be ${allowed}, got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`,
    { details: { operation, argument, value } },
  );
}

/** An epoch-ms time (an expiry, the caller's clock). */
export function requireEpochMs(operation: string, argument: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(operation, argument, value, "a non-negative integer epoch ms");
  }
}

/** A Kafka offset (source checkpoint or target position). */
export function requireOffset(operation: string, argument: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument(operation, argument, value, "a non-negative safe integer");
  }
}

/** A worker id; `other` is one it must differ from (the owner a requester asks). */
export function requireWorkerId(operation: string, argument: string, value: string, other?: string): void {
  if (value === "" || value === other) {
    throw invalidArgument(
      operation,
      argument,
      value,
      other === undefined ? "a non-empty worker id" : `a non-empty worker id other than "${other}"`,
    );
  }
}
