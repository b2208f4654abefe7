/**
 * The transaction around one fenced write (target.fencing "transactional") and its bounds, and
 * ending what a failed write left open. The target writer (target-writer.ts) sends the batches;
 * the partition's transactional producer (transaction-producers.ts) talks to the coordinator.
 *
 * Where a transaction of ours can be left open: a write that fails after AddPartitionsToTxn was
 * sent (a batch of unknown outcome, a refused record, the producer session lost, EndTxn refused,
 * unanswered or too late for the run). A write that resolves, also one cut at its deadline, has
 * committed what it acknowledged (or aborted, having none). After a failure the identity is
 * dropped, so nothing more is sent under it, and the transaction stays open until an
 * InitProducerId ends it: the pump's fence before its next write, endOpenTransaction before the
 * lease goes, or else the next holder's fence or the coordinator's timeout. Until then every
 * read_committed consumer of the partition stops at its first record.
 */
import type { TopicPartition, WriteResult } from "../../core/model.js";
import type { Clock, Logger, OpenTransactionEnd, WriteDeadline } from "../../core/ports.js";
import { isReplicatorError, ReplicatorError } from "../../errors.js";
import { fencedOr } from "./produce-outcome.js";
import type { ProducerIdentity } from "./producer-state.js";
import type { TransactionResult } from "./transaction-coordinator.js";
import type { TransactionProducers } from "./transaction-producers.js";

/** What of the target writer a transaction uses. */
export interface TransactionalWriter {
  readonly transactions: TransactionProducers;
  readonly clock: Clock;
  /** One request's bound (the cluster client's request timeout). */
  readonly requestTimeoutMs: number;
  /** How long one coordinator step is retried (KafkaPartitionWriterOptions.retryDeadlineMs). */
  readonly retryDeadlineMs: number;
  readonly logger: Logger | undefined;
}

export interface WriteDeadlines {
  /** The lease's expiry, read before each request: no produce request outlasts it. */
  readonly lease: WriteDeadline;
  /** The run's hard deadline (epoch ms): the process may be gone after it. */
  readonly run: number;
}

/**
 * One write as one transaction, committed before the write resolves. Bounds, on our clock:
 *  - `commitBy` is the run's deadline or the transaction's timeout, whichever is first. The
 *    coordinator counts the timeout from its receipt of AddPartitionsToTxn, after `begun`, so it
 *    never aborts a live write under us, however far renewals carry the lease;
 *  - produce requests end by the lease's expiry and a request before `commitBy`, room for EndTxn;
 *  - EndTxn may outlast the lease (a writer that fenced us meanwhile has it refused; one that
 *    fences us later sees it when it looks) but not `commitBy` (endTransaction).
 * Without room for one request and its commit no transaction is begun: the write resolves with
 * nothing acknowledged, as one cut at its deadline before its first batch.
 */
export async function writeTransaction(
  w: TransactionalWriter,
  tp: TopicPartition,
  deadlines: WriteDeadlines,
  sendBatches: (deadline: WriteDeadline) => Promise<WriteResult>,
  records: number,
): Promise<WriteResult> {
  const { transactions, clock, requestTimeoutMs, retryDeadlineMs } = w;
  const begun = clock.now();
  const commitBy = Math.min(deadlines.run, begun + transactions.timeoutMs);
  const sendBy: WriteDeadline = () => Math.min(deadlines.lease(), commitBy - requestTimeoutMs);
  const fits = () => clock.now() + requestTimeoutMs <= sendBy();
  const nothing: WriteResult = { baseOffset: -1, records, acknowledged: 0 };
  // Retries of a coordinator step end a request before the produce bound, so the last one ends by it.
  const until = () => Math.min(sendBy() - requestTimeoutMs, clock.now() + retryDeadlineMs);
  if (!fits()) return nothing;
  const identity = await transactions.identity(tp, until());
  if (!fits()) return nothing;
  try {
    await transactions.begin(tp, identity, until());
    const result = await sendBatches(sendBy);
    await endTransaction(w, tp, identity, result.acknowledged > 0 ? "commit" : "abort", commitBy);
    return result;
  } catch (error) {
    const failure = fencedOr(error);
    transactions.forget(tp, identity, isReplicatorError(failure, "PRODUCER_FENCED"));
    throw failure;
  }
}

/**
 * EndTxn, answered by `commitBy` or given up then, with a warning: its retries alone (for
 * retryDeadlineMs, then one more attempt) could run past the run's end, and a Lambda frozen or
 * killed mid-request leaves the outcome to chance. Given up, the write fails as of unknown
 * outcome (the commit may still land) and its transaction may stay open.
 */
async function endTransaction(
  w: TransactionalWriter,
  tp: TopicPartition,
  identity: ProducerIdentity,
  outcome: TransactionResult,
  commitBy: number,
): Promise<void> {
  const { clock } = w;
  const stop = new AbortController();
  const ending = w.transactions.end(
    tp,
    identity,
    outcome,
    Math.min(clock.now() + w.retryDeadlineMs, commitBy),
  );
  // Settling after the race was lost, it must not surface as an unhandled rejection.
  ending.catch(() => undefined);
  const late = clock.sleep(Math.max(0, commitBy - clock.now()), stop.signal).then(() => {
    if (stop.signal.aborted) return;
    const details = { topic: tp.topic, partition: tp.partition, outcome, commitBy };
    w.logger?.warn(
      "EndTxn not answered by the run's deadline; its transaction waits for a fence or its timeout",
      details,
    );
    throw new ReplicatorError(
      "KAFKA_RETRIABLE",
      `EndTxn ${outcome} for ${tp.topic}/${tp.partition} not answered by the run's deadline: outcome unknown`,
      { details },
    );
  });
  try {
    await Promise.race([ending, late]);
  } finally {
    stop.abort();
  }
}

/**
 * Ends a transaction a failed write left open, by fencing rather than EndTxn(abort): a request of
 * that write may still be in the network, and landing after an abort under the same epoch it
 * would open a transaction nobody ends (a hanging transaction, KIP-890); InitProducerId bumps the
 * epoch, so the broker refuses it. Bounded as TargetWriter.fence: no attempt starts without the
 * time to end by the deadline, so it cannot land after the lease and abort a successor's write.
 */
export async function endOpenTransaction(
  w: TransactionalWriter,
  tp: TopicPartition,
  deadline: WriteDeadline,
): Promise<OpenTransactionEnd> {
  if (!w.transactions.mayBeOpen(tp)) return "none";
  const now = w.clock.now();
  const until = Math.min(now + w.retryDeadlineMs, deadline() - w.requestTimeoutMs);
  if (until < now) return "no-time";
  await w.transactions.fence(tp, until);
  return "aborted";
}
