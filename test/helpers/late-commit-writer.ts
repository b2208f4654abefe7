/**
 * A TargetWriter over an InMemoryCluster whose chosen writes become zombie transactions: their
 * records are held back as an open transaction, and commit late, right after the next look at
 * the target (a ListOffsets or a fetch through `admin` / `reader`, answered with what was there
 * before), unless fence() comes first. fence() ends the open transaction as Kafka's
 * InitProducerId does: aborts it (the default), or, with `onFence: "commit"`, completes it
 * before returning (a transaction whose commit was already under way). Either way nothing of it
 * can land after fence() resolved, so a holder that fences before it looks sees the final state.
 * One instance stands for every holder's writer: the open transaction is the partition's
 * (one transactional.id per target partition), whoever opened it.
 */
import type {
  FetchedRecords,
  FetchLimits,
  MirrorRecord,
  TopicPartition,
  WriteResult,
} from "../../lib/core/model.js";
import type {
  Clock,
  ClusterAdmin,
  OpenTransactionEnd,
  SourceReader,
  TargetWriter,
  TransactionTimeout,
  WriteDeadline,
} from "../../lib/core/ports.js";
import { type ProvenanceStamp, stamped } from "../../lib/core/provenance.js";
import { ReplicatorError } from "../../lib/errors.js";
import type { InMemoryCluster } from "./fake-cluster.js";

/**
 * How the writer of a zombie write hears of it: at once as a timeout, only when it ends, or at
 * once as a refused record (non-retryable: the real writer leaves the batches before that record
 * in the open transaction).
 */
export type ZombieAnswer = "times-out" | "hangs" | "refused";

interface OpenTransaction {
  readonly tp: TopicPartition;
  readonly records: readonly MirrorRecord[];
  /** Answers a hung write once the transaction ended. */
  readonly settle: (committed: boolean) => void;
}

export class LateCommitWriter implements TargetWriter {
  readonly #cluster: InMemoryCluster;
  readonly #onFence: "abort" | "commit";
  readonly #clock: Clock | undefined;
  readonly #zombies = new Map<number, ZombieAnswer>();
  #open: OpenTransaction | null = null;
  #writes = 0;
  /** What happened, in order, for assertions and failure messages. */
  readonly events: string[] = [];

  constructor(cluster: InMemoryCluster, options: { onFence?: "abort" | "commit"; clock?: Clock } = {}) {
    this.#cluster = cluster;
    this.#onFence = options.onFence ?? "abort";
    this.#clock = options.clock;
  }

  /** Makes write number `n` (1-based, counted over every call of write) a zombie. */
  strand(n: number, answer: ZombieAnswer): this {
    this.#zombies.set(n, answer);
    return this;
  }

  /** True while a zombie's transaction is open. */
  get pending(): boolean {
    return this.#open !== null;
  }

  async write(
    tp: TopicPartition,
    records: readonly MirrorRecord[],
    stamp?: ProvenanceStamp | null,
    deadline?: WriteDeadline,
    runDeadline?: number,
  ): Promise<WriteResult> {
    const n = ++this.#writes;
    const answer = this.#zombies.get(n);
    if (answer === undefined) return this.#cluster.write(tp, records, stamp, deadline, runDeadline);
    const held = stamp == null ? records : records.map((r) => stamped(r, stamp));
    this.events.push(`write ${n} left open (${records.length} records)`);
    return new Promise<WriteResult>((resolve, reject) => {
      const settle = (committed: boolean) => {
        if (answer !== "hangs") return;
        if (committed) resolve({ baseOffset: -1, records: records.length, acknowledged: records.length });
        else
          reject(new ReplicatorError("PRODUCER_FENCED", `writer of ${tp.topic}/${tp.partition} was fenced`));
      };
      this.#open = { tp, records: held, settle };
      if (answer === "times-out") reject(new ReplicatorError("KAFKA_RETRIABLE", "request timed out"));
      if (answer === "refused") {
        const details = { ...tp, kafkaError: "MESSAGE_TOO_LARGE" };
        reject(
          new ReplicatorError("RECORD_REJECTED", "target refused a record: MESSAGE_TOO_LARGE", { details }),
        );
      }
    });
  }

  readonly fences = true;
  /** What the worker settled at the run's start. */
  transactionTimeout: TransactionTimeout | null = null;

  useTransactionTimeout(timeout: TransactionTimeout): void {
    this.transactionTimeout = timeout;
  }

  /**
   * As KafkaPartitionWriter's: a fence (abort, or the commit already under way) when a transaction
   * is open and a request fits before the deadline, by `clock` (without one: unless it is -∞).
   */
  async endOpenTransaction(tp: TopicPartition, deadline: WriteDeadline): Promise<OpenTransactionEnd> {
    if (this.#open === null || !sameTp(this.#open.tp, tp)) return "none";
    if ((this.#clock?.now() ?? Number.NEGATIVE_INFINITY) >= deadline()) {
      this.events.push("open transaction left: no time");
      return "no-time";
    }
    this.events.push("end open transaction");
    await this.fence(tp);
    return "aborted";
  }

  producerId(_tp: TopicPartition): bigint | null {
    return this.#cluster.producerIdOfWrites;
  }

  async fence(tp: TopicPartition): Promise<void> {
    this.events.push("fence");
    if (this.#open !== null && sameTp(this.#open.tp, tp)) this.#end(this.#onFence === "commit");
  }

  close(): Promise<void> {
    return this.#cluster.close();
  }

  /** The target cluster's admin; the open transaction commits right after each answer. */
  get admin(): ClusterAdmin {
    const cluster = this.#cluster;
    return {
      listTopics: () => cluster.listTopics(),
      createTopics: (specs) => cluster.createTopics(specs),
      listOffsets: async (topic, partitions) => {
        const answer = await cluster.listOffsets(topic, partitions);
        this.events.push("look (list offsets)");
        this.#lateCommit();
        return answer;
      },
      describeTopicConfigs: (topics) => cluster.describeTopicConfigs(topics),
      describeBrokerConfigs: (names) => cluster.describeBrokerConfigs(names),
      alterTopicConfigs: (changes) => cluster.alterTopicConfigs(changes),
      createPartitions: (changes) => cluster.createPartitions(changes),
      close: () => cluster.close(),
    };
  }

  /** The target cluster's reader; the open transaction commits right after each answer. */
  get reader(): SourceReader {
    const cluster = this.#cluster;
    return {
      fetch: async (tp: TopicPartition, offset: number, limits: FetchLimits): Promise<FetchedRecords> => {
        const answer = await cluster.fetch(tp, offset, limits);
        this.events.push("look (fetch)");
        this.#lateCommit();
        return answer;
      },
      fetchBatches: async (tp, offset, limits) => {
        const answer = await cluster.fetchBatches(tp, offset, limits);
        this.events.push("look (fetch)");
        this.#lateCommit();
        return answer;
      },
      contentCrc: (batch) => cluster.contentCrc(batch),
      describePartition: (tp) => cluster.describePartition(tp),
      endOffsetForLeaderEpoch: (tp, epoch) => cluster.endOffsetForLeaderEpoch(tp, epoch),
      close: () => cluster.close(),
    };
  }

  #lateCommit(): void {
    if (this.#open !== null) this.#end(true);
  }

  #end(committed: boolean): void {
    const open = this.#open;
    if (open === null) return;
    this.#open = null;
    // Appended as they are: they carry their provenance already, as the real write's would.
    if (committed) this.#cluster.append(open.tp, open.records);
    this.events.push(committed ? "open transaction committed" : "open transaction aborted");
    open.settle(committed);
  }
}

function sameTp(a: TopicPartition, b: TopicPartition): boolean {
  return a.topic === b.topic && a.partition === b.partition;
}
