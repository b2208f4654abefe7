/**
 * Timings derived from the config that its checks (schema.ts) and the adapters' wiring share:
 * the lease store's request timeout and attempts, and how much of a lease one write may need.
 */

/** Attempts per lease-store call, the SDK's own retries included (see lib/dynamodb/client.ts). */
export const LEASE_STORE_MAX_ATTEMPTS = 2;

/** leases.requestTimeoutMs when absent: a few seconds, fitting shorter renewal intervals too. */
export const DEFAULT_LEASE_REQUEST_TIMEOUT_MS = 2_000;

/**
 * The DynamoDB request timeout in effect. Derived when absent, so that configs written before the
 * field existed (renewals every second in tests and demos) stay valid: every attempt of a call
 * then fits in less than one renewal interval.
 */
export function leaseRequestTimeoutMs(leases: {
  readonly requestTimeoutMs?: number | undefined;
  readonly renewIntervalMs: number;
}): number {
  return (
    leases.requestTimeoutMs ??
    Math.min(
      DEFAULT_LEASE_REQUEST_TIMEOUT_MS,
      Math.floor(leases.renewIntervalMs / (LEASE_STORE_MAX_ATTEMPTS + 1)),
    )
  );
}

/**
 * How long before its lease (or run) ends a worker stops starting writes: enough for one request
 * and one resend of it, each bounded by the target request timeout. Past this point the writer
 * itself stops sending, request by request, so that nothing is outstanding when the lease ends.
 */
export function writeSafetyMarginMs(config: {
  readonly target: { readonly requestTimeoutMs: number };
}): number {
  return 2 * config.target.requestTimeoutMs;
}

/**
 * Rounds of requests (groups of up to target.maxInFlightBatches batches, each bounded by one
 * target.requestTimeoutMs) that the largest write of an uncompressed full fetch needs. Its
 * records hold about batch.maxBytes; the writer closes a target batch only when the next record
 * would overflow target.maxBatchBytes, so two neighbouring batches always hold more than that:
 * at most 2 x ceil(batch.maxBytes / target.maxBatchBytes) batches, and never more than
 * batch.maxRecords (one record each). Compressed source batches can decompress into many more,
 * and the provenance header adds bytes per record, so this is not a bound on every write: the
 * guarantee is the writer's own check before each request (no request that could still be
 * outstanding at the lease's end is sent; a write cut there checkpoints what landed). This check
 * keeps an ordinary full fetch from being cut whenever a lease is not renewed in time.
 */
export function largestWriteGroups(config: {
  readonly batch: { readonly maxBytes: number; readonly maxRecords: number };
  readonly target: { readonly maxBatchBytes: number; readonly maxInFlightBatches: number };
}): number {
  const batches = Math.min(
    config.batch.maxRecords,
    2 * Math.ceil(config.batch.maxBytes / config.target.maxBatchBytes),
  );
  return Math.ceil(batches / config.target.maxInFlightBatches);
}

/** What one write takes at most of fetches read ahead already (writeMaxBytes). */
export const MERGED_WRITE_BYTES = 4 * 1024 * 1024;

/**
 * The most bytes one write takes along (SourceFeed.withReady): a partition that is behind is
 * copied in fewer, larger writes, each a transaction with its own round trips (bench with the
 * target 20 ms away: 376 writes -> 193-199, README Performance). At least one full fetch,
 * at most MERGED_WRITE_BYTES, and no more target batches than the rounds the check above allows
 * a full fetch (the write window of largestWriteGroups).
 */
export function writeMaxBytes(config: {
  readonly batch: { readonly maxBytes: number };
  readonly target: {
    readonly maxBatchBytes: number;
    readonly maxInFlightBatches: number;
    readonly requestTimeoutMs: number;
  };
}): number {
  const { target } = config;
  const rounds = Math.floor(writeSafetyMarginMs(config) / target.requestTimeoutMs);
  // largestWriteGroups counts up to 2 target batches per target.maxBatchBytes of a write.
  const byRounds = Math.floor((rounds * target.maxInFlightBatches) / 2) * target.maxBatchBytes;
  return Math.max(config.batch.maxBytes, Math.min(MERGED_WRITE_BYTES, byRounds));
}
