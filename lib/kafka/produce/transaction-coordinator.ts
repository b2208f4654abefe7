/**
 * The transaction coordinator's side of one transactional.id (KIP-98): find the coordinator,
 * InitProducerId (which fences every earlier holder of the id by bumping its epoch and aborting
 * its open transaction), AddPartitionsToTxn before the first transactional batch of a partition,
 * and EndTxn to commit or abort. Produce requests themselves go to partition leaders, not here.
 *
 * Retry layer: this class retries what the coordinator asks to retry (loading, moved, not yet
 * available, a transaction still completing) and lost connections, until the caller's deadline;
 * its callers must not retry these errors again. Every request here is safe to repeat: a second
 * InitProducerId only bumps the epoch again, AddPartitionsToTxn of a partition already in the
 * transaction is a no-op, and Kafka answers a repeated EndTxn of a completed transaction with the
 * same result. A refusal because a newer holder fenced us is PRODUCER_FENCED, never retried.
 * A `deadline` is an absolute time on the injected clock; one attempt is made even past it.
 */
import type { Clock, Logger } from "../../core/ports.js";
import { describeError, ReplicatorError } from "../../errors.js";
import type { Broker, KafkaClusterClient } from "../wire/cluster-client.js";
import { isTransientKafkajsError, protocolErrorCode, translateKafkajsError } from "../wire/connection.js";
import { isFencedCode, KafkaErrorCode, kafkaError } from "../wire/error-codes.js";
import { brokerRequests, transactionCoordinatorId } from "../wire/kafkajs-internals.js";
import { retryKafka } from "../wire/retry.js";

/** The first retry pause of AddPartitionsToTxn (Kafka's producer: ADD_PARTITIONS_RETRY_BACKOFF_MS). */
export const ADD_PARTITIONS_RETRY_BACKOFF_MS = 20;

/** What InitProducerId gave a transactional.id: every batch and EndTxn of its transactions carries it. */
export interface TransactionalProducer {
  readonly transactionalId: string;
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

export type TransactionResult = "commit" | "abort";

export interface TransactionCoordinatorOptions {
  /** The target cluster's client, shared with the writer. */
  readonly client: KafkaClusterClient;
  /** From transactionalIdFor (lib/kafka/produce/transactional-id.ts). */
  readonly transactionalId: string;
  /**
   * The coordinator aborts a transaction left open longer than this (transaction.timeout.ms); the
   * broker refuses values above its transaction.max.timeout.ms (15 min by default). @default 60000
   */
  readonly transactionTimeoutMs?: number;
  /** Deadlines and backoff sleeps are measured on this clock, never on Date.now(). @default the client's */
  readonly clock?: Clock;
  /** First retry delay, doubling with jitter up to 5 s. @default 100 */
  readonly retryBackoffMs?: number;
  readonly logger?: Logger;
}

const FIND_COORDINATOR_API_KEY = 10;
/** v0 cannot name a key type: it would find a consumer group's coordinator instead. */
const FIND_COORDINATOR_VERSIONS = [2, 1] as const;
const MAX_INT32 = 2 ** 31 - 1;
const KAFKAJS_UNKNOWN_CODE = -99;
const MAX_STRING_BYTES = 32_767;

/** The coordinator moved or is not elected yet: look it up again. */
const REFIND_CODES: ReadonlySet<number> = new Set([
  KafkaErrorCode.COORDINATOR_NOT_AVAILABLE,
  KafkaErrorCode.NOT_COORDINATOR,
]);
/** Names error-codes.ts does not know, for the fatal errors only this API returns. */
const TRANSACTION_ERROR_NAMES: Readonly<Record<number, string>> = {
  50: "INVALID_TRANSACTION_TIMEOUT",
  52: "TRANSACTION_COORDINATOR_FENCED",
  53: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
};

export class TransactionCoordinator {
  readonly transactionalId: string;
  readonly #client: KafkaClusterClient;
  readonly #transactionTimeoutMs: number;
  readonly #clock: Clock;
  readonly #retryBackoffMs: number;
  readonly #logger: Logger | undefined;
  #coordinator: Broker | undefined;
  /** Spreads coordinator lookups over the brokers, so one that is down is not asked forever. */
  #lookups = 0;

  constructor(options: TransactionCoordinatorOptions) {
    validateOptions(options);
    this.transactionalId = options.transactionalId;
    this.#client = options.client;
    this.#transactionTimeoutMs = options.transactionTimeoutMs ?? 60_000;
    this.#clock = options.clock ?? options.client.clock;
    this.#retryBackoffMs = options.retryBackoffMs ?? 100;
    this.#logger = options.logger;
  }

  /**
   * InitProducerId for the transactional.id: the returned producer is the id's only valid one;
   * earlier holders are fenced and their open transaction aborted (by Kafka; the shared mock
   * does neither unpatched, see test/integration/kafka/transactions.test.ts). The transaction
   * timeout is the one given at construction unless the call names another (settled per run).
   */
  async initProducer(
    deadline: number,
    transactionTimeoutMs = this.#transactionTimeoutMs,
  ): Promise<TransactionalProducer> {
    const result = await this.#retrying("InitProducerId", deadline, undefined, (broker) =>
      brokerRequests.initProducerId(broker, {
        transactionalId: this.transactionalId,
        transactionTimeout: transactionTimeoutMs,
      }),
    );
    const producer = {
      transactionalId: this.transactionalId,
      producerId: BigInt(result.producerId),
      producerEpoch: result.producerEpoch,
    };
    this.#logger?.info("transactional producer initialised", describeProducer(producer));
    return producer;
  }

  /**
   * AddPartitionsToTxn: must precede the transaction's first batch to `topic`/`partition`. Right
   * after the last transaction's EndTxn the coordinator is still writing its markers and answers
   * CONCURRENT_TRANSACTIONS, so the retries start at ADD_PARTITIONS_RETRY_BACKOFF_MS, as Kafka's
   * producer does (KAFKA-5482): at the client's backoff, every write after a commit waited 100 ms.
   */
  async addPartition(
    producer: TransactionalProducer,
    topic: string,
    partition: number,
    deadline: number,
  ): Promise<void> {
    this.#checkProducer(producer);
    await this.#retrying(
      `AddPartitionsToTxn ${topic}/${partition}`,
      deadline,
      producer,
      (broker) =>
        brokerRequests.addPartitionsToTxn(broker, {
          transactionalId: this.transactionalId,
          producerId: producer.producerId.toString(),
          producerEpoch: producer.producerEpoch,
          topics: [{ topic, partitions: [partition] }],
        }),
      Math.min(this.#retryBackoffMs, ADD_PARTITIONS_RETRY_BACKOFF_MS),
    );
  }

  /** EndTxn: the coordinator writes COMMIT or ABORT markers into every partition of the transaction. */
  async endTransaction(
    producer: TransactionalProducer,
    result: TransactionResult,
    deadline: number,
  ): Promise<void> {
    this.#checkProducer(producer);
    await this.#retrying(`EndTxn ${result}`, deadline, producer, (broker) =>
      brokerRequests.endTxn(broker, {
        transactionalId: this.transactionalId,
        producerId: producer.producerId.toString(),
        producerEpoch: producer.producerEpoch,
        transactionResult: result === "commit",
      }),
    );
  }

  async #retrying<T>(
    what: string,
    deadline: number,
    producer: TransactionalProducer | undefined,
    call: (coordinator: Broker) => Promise<T>,
    backoffMs = this.#retryBackoffMs,
  ): Promise<T> {
    // What the last failure allows: a retry here, or at a coordinator found again first.
    let last: "never" | "here" | "elsewhere" = "here";
    return retryKafka(
      async (attempt) => {
        if (last === "elsewhere") {
          this.#coordinator = undefined;
          await this.#client.refreshMetadata();
        }
        try {
          return await call(await this.#findCoordinator());
        } catch (error) {
          const failure = this.#classify(error, what, producer);
          last = failure.retry;
          if (failure.retry !== "never") {
            this.#logger?.debug("transaction coordinator retry", {
              transactionalId: this.transactionalId,
              request: what,
              attempt,
              ...describeError(error),
            });
          }
          throw failure.error;
        }
      },
      backoffMs,
      { clock: this.#clock, deadline, retryable: () => last !== "never" },
    );
  }

  /** Whether an error may go away by retrying (here, or at a re-found coordinator), as a ReplicatorError. */
  #classify(
    error: unknown,
    what: string,
    producer: TransactionalProducer | undefined,
  ): { retry: "never" | "here" | "elsewhere"; error: ReplicatorError } {
    const code = kafkaCodeOf(error);
    if (code === undefined) {
      if (error instanceof ReplicatorError) return { retry: error.retryable ? "elsewhere" : "never", error };
      // No Kafka answer: the connection broke or timed out, so the coordinator may be gone.
      const translated = translateKafkajsError(error, `${what} for ${this.transactionalId}`, {
        transactionalId: this.transactionalId,
        request: what,
      });
      return { retry: isTransientKafkajsError(error) ? "elsewhere" : "never", error: translated };
    }
    if (isFencedCode(code)) return { retry: "never", error: this.#fenced(error, what, code, producer) };
    const name = TRANSACTION_ERROR_NAMES[code] ?? kafkaError(code).name;
    const retriable = TRANSACTION_ERROR_NAMES[code] === undefined && kafkaError(code).retriable;
    const failed = new ReplicatorError(
      retriable ? "KAFKA_RETRIABLE" : "KAFKA_FATAL",
      `${what} for ${this.transactionalId} failed: ${name}`,
      {
        cause: error,
        details: {
          transactionalId: this.transactionalId,
          request: what,
          kafkaErrorCode: code,
          kafkaError: name,
        },
      },
    );
    if (!retriable) return { retry: "never", error: failed };
    return { retry: REFIND_CODES.has(code) ? "elsewhere" : "here", error: failed };
  }

  #fenced(error: unknown, what: string, code: number, producer: TransactionalProducer | undefined) {
    const kafkaName = kafkaError(code).name;
    return new ReplicatorError(
      "PRODUCER_FENCED",
      `${what} for ${this.transactionalId} refused (${kafkaName}): producer ${producer?.producerId ?? "?"} ` +
        `epoch ${producer?.producerEpoch ?? "?"} was fenced by a newer holder of the transactional id`,
      {
        cause: error,
        details: {
          ...(producer === undefined
            ? { transactionalId: this.transactionalId }
            : describeProducer(producer)),
          request: what,
          kafkaErrorCode: code,
          kafkaError: kafkaName,
        },
      },
    );
  }

  /** Asks the brokers in turn where the transactional.id's coordinator is, and connects to it. */
  async #findCoordinator(): Promise<Broker> {
    if (this.#coordinator !== undefined) return this.#coordinator;
    const { ids } = await this.#client.brokers();
    const asked = ids[this.#lookups++ % Math.max(1, ids.length)];
    const broker = asked === undefined ? await this.#client.controller() : await this.#client.broker(asked);
    this.#client.negotiate(broker, "FindCoordinator", FIND_COORDINATOR_API_KEY, FIND_COORDINATOR_VERSIONS);
    const nodeId = await transactionCoordinatorId(broker, this.transactionalId);
    this.#coordinator = await this.#client.broker(nodeId);
    return this.#coordinator;
  }

  #checkProducer(producer: TransactionalProducer): void {
    if (producer.transactionalId !== this.transactionalId) {
      throw new ReplicatorError(
        "KAFKA_FATAL",
        `producer of transactional id ${JSON.stringify(producer.transactionalId)} used with ` +
          `coordinator of ${JSON.stringify(this.transactionalId)}`,
        { details: describeProducer(producer) },
      );
    }
  }
}

/**
 * The Kafka error code of a failed request. kafkajs 2.2.4 turns codes its table lacks (e.g. 90
 * PRODUCER_FENCED, which newer brokers send instead of INVALID_PRODUCER_EPOCH) into code -99 and
 * keeps the real one only in the message, so it is read back from there.
 */
function kafkaCodeOf(error: unknown): number | undefined {
  const code = protocolErrorCode(error);
  if (code !== KAFKAJS_UNKNOWN_CODE || !(error instanceof Error)) return code;
  const original = /^Unknown error code (-?\d+)$/.exec(error.message)?.[1];
  return original === undefined ? code : Number(original);
}

/** Payload-free, JSON-safe facts about a producer for errors and logs (bigint does not serialise). */
function describeProducer(producer: TransactionalProducer): Record<string, unknown> {
  return {
    transactionalId: producer.transactionalId,
    producerId: producer.producerId.toString(),
    producerEpoch: producer.producerEpoch,
  };
}

function validateOptions(options: TransactionCoordinatorOptions): void {
  const problems: string[] = [];
  const idBytes = Buffer.byteLength(options.transactionalId, "utf8");
  if (idBytes === 0 || idBytes > MAX_STRING_BYTES) {
    problems.push(`transactionalId must be 1..${MAX_STRING_BYTES} bytes, not ${idBytes}`);
  }
  const timeout = options.transactionTimeoutMs;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1 || timeout > MAX_INT32)) {
    problems.push(`transactionTimeoutMs must be an integer in 1..${MAX_INT32}, not ${timeout}`);
  }
  const backoff = options.retryBackoffMs;
  if (backoff !== undefined && (!Number.isFinite(backoff) || backoff < 0)) {
    problems.push(`retryBackoffMs must be a number >= 0, not ${backoff}`);
  }
  if (problems.length > 0) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `invalid transaction coordinator options: ${problems.join("; ")}`,
      {
        details: { problems },
      },
    );
  }
}
