/**
 * The transaction.timeout.ms of fenced writes (target.fencing "transactional"), settled at the
 * start of every run against the target brokers' transaction.max.timeout.ms, which Kafka enforces
 * by refusing InitProducerId (INVALID_TRANSACTION_TIMEOUT): a timeout above the cap would stop
 * every partition and copy nothing.
 *
 * Why there is a minimum. Each write is one transaction. The coordinator aborts a transaction
 * left open longer than its timeout and bumps the producer's epoch; the writer then hears
 * PRODUCER_FENCED, and the pump gives the partition up as taken by someone else, idle until its
 * lease runs out. So a live write's transaction must outlive the longest write a holder may run:
 * a write may send requests until its lease's expiry (the gate starts it with at least the write
 * margin left, and a lease renewed just before is a whole leases.durationMs ahead), then commits
 * with one more request, and AddPartitionsToTxn opened it with one. Hence
 *   minimum = leases.durationMs + writeSafetyMarginMs (2 × target.requestTimeoutMs).
 * The writer also ends a transaction's requests a commit before its timeout
 * (transactional-write.ts), so renewals that carry the lease on during one write cannot outrun it
 * either; at the minimum that bound never cuts a write the lease would not cut.
 */
import { describeError, ReplicatorError } from "../../errors.js";
import type { ClusterAdmin, Logger, TargetWriter, TransactionTimeout } from "../ports.js";

export const TRANSACTION_MAX_TIMEOUT_CONFIG = "transaction.max.timeout.ms";
/** Kafka's default transaction.max.timeout.ms, and the most we ask for without need. */
export const USUAL_MAX_TRANSACTION_TIMEOUT_MS = 15 * 60_000;

export interface TransactionLeaseTimings {
  readonly leases: { readonly durationMs: number; readonly renewIntervalMs: number };
  /** WorkerSettings.writeSafetyMarginMs: 2 × target.requestTimeoutMs. */
  readonly writeSafetyMarginMs: number;
}

/**
 * What we ask for and the least we can live with. Three lease durations leave a live write room
 * to spare, and a dead holder's transaction is fenced by its successor within one lease anyway;
 * the 15 minutes are Kafka's default cap. Never below the minimum, even for leases longer than
 * that allows: then the brokers' cap must be raised (or the leases shortened).
 */
export function transactionTimeoutBounds(timings: TransactionLeaseTimings): {
  readonly wantedMs: number;
  readonly minimumMs: number;
} {
  const { durationMs } = timings.leases;
  const minimumMs = durationMs + timings.writeSafetyMarginMs;
  return {
    wantedMs: Math.max(minimumMs, Math.min(USUAL_MAX_TRANSACTION_TIMEOUT_MS, 3 * durationMs)),
    minimumMs,
  };
}

/** min(wanted, cap); throws CONFIG_INVALID naming the values when the cap is below the minimum. */
export function settleTransactionTimeout(
  timings: TransactionLeaseTimings,
  capMs: number | null,
): TransactionTimeout {
  const { wantedMs, minimumMs } = transactionTimeoutBounds(timings);
  const timeout: TransactionTimeout = {
    ms: capMs === null ? wantedMs : Math.min(wantedMs, capMs),
    wantedMs,
    capMs,
    minimumMs,
    leaseDurationMs: timings.leases.durationMs,
    renewIntervalMs: timings.leases.renewIntervalMs,
    writeSafetyMarginMs: timings.writeSafetyMarginMs,
  };
  if (timeout.ms >= minimumMs) return timeout;
  throw timeoutError(
    timeout,
    `the target brokers' ${TRANSACTION_MAX_TIMEOUT_CONFIG} (${capMs} ms) is below ${needs(timeout)}`,
  );
}

/**
 * The error for InitProducerId refused with INVALID_TRANSACTION_TIMEOUT: the brokers' cap is
 * below what we asked for, which happens only when they did not tell us their cap at the start
 * (or a broker has a lower one than those that did). Non-retryable, and keeps the Kafka error's
 * name, so failure-report.ts says it once per run as a setting to change.
 */
export function transactionTimeoutRefused(timeout: TransactionTimeout, cause: unknown): ReplicatorError {
  const told =
    timeout.capMs === null ? "did not say their cap when asked at the start" : `said ${timeout.capMs} ms`;
  return timeoutError(
    timeout,
    `the target brokers refused transaction.timeout.ms ${timeout.ms} (INVALID_TRANSACTION_TIMEOUT): their ` +
      `${TRANSACTION_MAX_TIMEOUT_CONFIG} is lower (they ${told}); kafka-mirror needs ${needs(timeout)}`,
    cause,
  );
}

function needs(t: TransactionTimeout): string {
  return (
    `the ${t.minimumMs} ms a write's transaction may stay open: leases.durationMs (${t.leaseDurationMs}) + ` +
    `2 × target.requestTimeoutMs (${t.writeSafetyMarginMs}); kafka-mirror asks for ${t.wantedMs} ms ` +
    "(3 × leases.durationMs, at most 15 min) and uses the brokers' cap when that is lower"
  );
}

function timeoutError(t: TransactionTimeout, problem: string, cause?: unknown): ReplicatorError {
  // The lease must keep room for a renewal and a write (worker-settings.ts, writeFitsInLease).
  const leaseFloor = t.renewIntervalMs + t.writeSafetyMarginMs;
  const shortest = (t.capMs ?? t.minimumMs) - t.writeSafetyMarginMs;
  const fix =
    `raise ${TRANSACTION_MAX_TIMEOUT_CONFIG} on the target brokers to at least ${t.minimumMs} ms ` +
    `(${t.wantedMs} for the usual headroom), or lower leases.durationMs` +
    (t.capMs === null ? "" : ` to at most ${shortest} ms`) +
    ` (it must stay above leases.renewIntervalMs + 2 × target.requestTimeoutMs = ${leaseFloor} ms: lower ` +
    "those too if need be), or set target.fencing: none (no fencing of frozen workers)";
  return new ReplicatorError("CONFIG_INVALID", `${problem}. To fix: ${fix}`, {
    ...(cause === undefined ? {} : { cause }),
    details: {
      kafkaError: "INVALID_TRANSACTION_TIMEOUT",
      transactionMaxTimeoutMs: t.capMs,
      wantedMs: t.wantedMs,
      minimumMs: t.minimumMs,
      leaseDurationMs: t.leaseDurationMs,
    },
  });
}

/**
 * The lowest transaction.max.timeout.ms of the target brokers (any of them may coordinate a
 * transactional id), or null, with one warning, when they do not say: no DescribeConfigs
 * permission, a Kafka-compatible target without broker configs, a cluster briefly unreachable.
 * Then we ask for the wanted value, and a refusal names the values (transactionTimeoutRefused).
 */
export async function targetTransactionCap(admin: ClusterAdmin, logger: Logger): Promise<number | null> {
  let problem: Record<string, unknown>;
  try {
    const brokers = await admin.describeBrokerConfigs([TRANSACTION_MAX_TIMEOUT_CONFIG]);
    const caps = [...brokers.values()]
      .map((configs) => Number(configs.get(TRANSACTION_MAX_TIMEOUT_CONFIG)))
      .filter((cap) => Number.isSafeInteger(cap) && cap > 0);
    if (caps.length > 0) return Math.min(...caps);
    problem = { brokersAnswering: brokers.size };
  } catch (error) {
    problem = describeError(error);
  }
  logger.warn(
    `the target brokers did not say their ${TRANSACTION_MAX_TIMEOUT_CONFIG}; asking for the wanted transaction timeout`,
    {
      ...problem,
      why: "a lower cap makes the brokers refuse it (INVALID_TRANSACTION_TIMEOUT), reported naming the values",
    },
  );
  return null;
}

/**
 * At a run's start, before any InitProducerId: settles the writer's transaction timeout, or throws
 * CONFIG_INVALID when the brokers' cap is too short for the lease timings (no retry can fix it).
 * Every run asks again, so a cap raised meanwhile is picked up by the next run.
 */
export async function prepareTransactions(o: {
  readonly target: TargetWriter;
  readonly targetAdmin: ClusterAdmin;
  readonly logger: Logger;
  readonly settings: TransactionLeaseTimings;
}): Promise<void> {
  if (!o.target.fences) return;
  const timeout = settleTransactionTimeout(o.settings, await targetTransactionCap(o.targetAdmin, o.logger));
  o.target.useTransactionTimeout(timeout);
  o.logger.info("transaction timeout settled", { ...timeout });
}
