/**
 * Turns what the DynamoDB client throws into a ReplicatorError, at the call site, keeping the SDK
 * error as `cause`. ConditionalCheckFailedException is not handled here: what a failed condition
 * means (lost lease, lost race, item already there) depends on the write, so each caller decides.
 */
import { DynamoDBServiceException } from "@aws-sdk/client-dynamodb";
import { isReplicatorError, ReplicatorError } from "../errors.js";

/**
 * Service errors that say "not now" rather than "never". DynamoDB marks some of them with
 * `$fault: "server"`, but the throttling ones are client faults, so they are listed by name.
 */
const TRANSIENT_ERROR_NAMES: ReadonlySet<string> = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "LimitExceededException",
  "InternalServerError",
  "ServiceUnavailable",
  "TransactionInProgressException",
  "TransactionConflictException",
]);

/** Errors that mean the table is not what we expect: missing, or keyed differently. */
const SHAPE_ERROR_NAMES: ReadonlySet<string> = new Set(["ResourceNotFoundException", "ValidationException"]);

export function translateDynamoDbError(
  error: unknown,
  operation: string,
  tableName: string,
  details: Record<string, unknown> = {},
): ReplicatorError {
  // Translated already, by whatever the client runs before the request (the embedded store's
  // start, lib/dynamodb/embedded/client.ts): wrapping it as "unreachable" would make it retryable.
  if (isReplicatorError(error)) return error;
  const facts = { ...details, operation, tableName };
  if (!(error instanceof DynamoDBServiceException)) {
    // No service response at all: connection refused or reset, DNS, socket or request timeout
    // (the SDK has already spent its own retries). The table may well be back in a moment.
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    if (error instanceof Error && error.name === "TimeoutError") {
      // The client's request timeout (lib/dynamodb/client.ts) failed every attempt: a hung call.
      return new ReplicatorError(
        "LEASE_STORE_UNAVAILABLE",
        `lease table ${tableName} did not answer ${operation} within the request timeout: ${reason}`,
        { cause: error, details: { ...facts, timedOut: true } },
      );
    }
    return new ReplicatorError(
      "LEASE_STORE_UNAVAILABLE",
      `lease table ${tableName} could not be reached (${operation}): ${reason}`,
      { cause: error, details: facts },
    );
  }
  const withName = { ...facts, awsError: error.name, httpStatus: error.$metadata.httpStatusCode };
  if (error.name === "ResourceNotFoundException") {
    return new ReplicatorError(
      "LEASE_STORE_INVALID",
      `lease table ${tableName} does not exist (${operation}); create it first (createLeaseTable)`,
      { cause: error, details: withName },
    );
  }
  if (SHAPE_ERROR_NAMES.has(error.name)) {
    return new ReplicatorError(
      "LEASE_STORE_INVALID",
      `lease table ${tableName} rejected ${operation} (is its key schema the lease table's?): ${error.message}`,
      { cause: error, details: withName },
    );
  }
  const status = error.$metadata.httpStatusCode ?? 0;
  if (TRANSIENT_ERROR_NAMES.has(error.name) || error.$fault === "server" || status >= 500) {
    return new ReplicatorError(
      "LEASE_STORE_UNAVAILABLE",
      `lease table ${tableName} is throttling or failing (${operation}): ${error.name}`,
      { cause: error, details: withName },
    );
  }
  // Access denied, bad credentials and the like: the store is out of reach for us, and retrying
  // with the same role will not change that, so it must not be retried in a loop.
  return new ReplicatorError(
    "LEASE_STORE_UNAVAILABLE",
    `lease table ${tableName} refused ${operation}: ${error.name}: ${error.message}`,
    { cause: error, details: withName, retryable: false },
  );
}
