/**
 * A TargetWriter over a shared InMemoryCluster with fencing as Kafka's transactional producers give it.
 */
import type { CopyUnits, TopicPartition, WriteResult } from "../../lib/core/model.js";
import type {
  OpenTransactionEnd,
  TargetWriter,
  TransactionTimeout,
  WriteDeadline,
} from "../../lib/core/ports.js";
import type { ProvenanceStamp } from "../../lib/core/provenance.js";
import { ReplicatorError } from "../../lib/errors.js";
import { type InMemoryCluster, keyOf } from "./fake-cluster.js";

/**
 * One worker's writer to a shared InMemoryCluster, with fencing as Kafka's transactional
 * producers give it: fence() (or the first write) takes a new epoch for the partition (and a new
 * producer id when InMemoryCluster.newProducerIdAtNextFence says so), and a
 * write of a writer whose epoch is no longer the partition's lands nothing and rejects with
 * PRODUCER_FENCED. The check is made when the write lands, so a write delayed past a newer
 * writer's fence is refused, as a frozen producer's late request is.
 */
export class FencedWriter implements TargetWriter {
  static readonly #registry = new WeakMap<InMemoryCluster, Map<string, number>>();
  readonly #cluster: InMemoryCluster;
  /** Per partition: the epoch and producer id of this writer's last fence. */
  readonly #mine = new Map<string, { readonly epoch: number; readonly producerId: bigint }>();

  constructor(cluster: InMemoryCluster) {
    this.#cluster = cluster;
  }

  readonly fences = true;
  /** What the worker settled at the run's start (Kafka would refuse one above its cap). */
  transactionTimeout: TransactionTimeout | null = null;

  useTransactionTimeout(timeout: TransactionTimeout): void {
    this.transactionTimeout = timeout;
  }

  /** Its writes land whole or not at all: nothing is ever left open. */
  async endOpenTransaction(_tp: TopicPartition, _deadline: WriteDeadline): Promise<OpenTransactionEnd> {
    return "none";
  }

  /** As Kafka keeps a transactional id's producer id across fences: the cluster's, once fenced. */
  producerId(tp: TopicPartition): bigint | null {
    return this.#mine.get(keyOf(tp))?.producerId ?? null;
  }

  async fence(tp: TopicPartition): Promise<void> {
    const epochs = this.#epochs();
    const next = (epochs.get(keyOf(tp)) ?? 0) + 1;
    epochs.set(keyOf(tp), next);
    const cluster = this.#cluster;
    if (cluster.newProducerIdAtNextFence) {
      cluster.producerIdOfWrites += 1000n;
      cluster.newProducerIdAtNextFence = false;
    }
    this.#mine.set(keyOf(tp), { epoch: next, producerId: cluster.producerIdOfWrites });
  }

  async write(
    tp: TopicPartition,
    records: CopyUnits,
    stamp?: ProvenanceStamp | null,
    deadline?: WriteDeadline,
    /** Writes here have no commit that could outlast the run: nothing to bound. */
    _runDeadline?: number,
  ): Promise<WriteResult> {
    if (!this.#mine.has(keyOf(tp))) await this.fence(tp);
    const mine = this.#mine.get(keyOf(tp));
    if (mine === undefined || mine.epoch !== this.#epochs().get(keyOf(tp))) {
      throw new ReplicatorError("PRODUCER_FENCED", `writer of ${tp.topic}/${tp.partition} was fenced`, {
        details: { ...tp },
      });
    }
    return this.#cluster.writeAs(mine.producerId, tp, records, stamp, deadline);
  }

  close(): Promise<void> {
    return this.#cluster.close();
  }

  #epochs(): Map<string, number> {
    let epochs = FencedWriter.#registry.get(this.#cluster);
    if (epochs === undefined) {
      epochs = new Map();
      FencedWriter.#registry.set(this.#cluster, epochs);
    }
    return epochs;
  }
}
