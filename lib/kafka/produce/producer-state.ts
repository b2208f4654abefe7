/**
 * The idempotent producer's identity and per-partition sequence numbers. The broker de-duplicates a
 * resent batch by (producer id, epoch, partition, base sequence), so a batch keeps its sequence
 * across retries and the sequence advances only once the broker has acknowledged it. The writer
 * relies on that: a batch whose attempt may have landed is resent under the identity and sequence
 * it was first sent with.
 *
 * When a partition's state is lost (the broker no longer accepts the sequence) or stays uncertain
 * (a batch that may have landed could not be confirmed before the write's deadline or retry
 * limit), the identity is dropped: the next write asks for a new producer id and every partition
 * starts again at sequence 0. Reusing the old sequence for other records after an uncertain
 * failure could make the broker take them for duplicates and drop them.
 */

export interface ProducerIdentity {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  /** Increases with every new identity; partitions compare it to know when to restart at 0. */
  readonly generation: number;
}

interface PartitionSequence {
  generation: number;
  nextSequence: number;
}

/** Sequences are int32 and wrap from 2^31-1 to 0, as in Kafka's producer. */
const SEQUENCE_MODULUS = 2 ** 31;

export class ProducerState {
  #identity: ProducerIdentity | undefined;
  #generation = 0;
  readonly #sequences = new Map<string, PartitionSequence>();

  current(): ProducerIdentity | undefined {
    return this.#identity;
  }

  adopt(producerId: bigint, producerEpoch: number): ProducerIdentity {
    this.#generation += 1;
    this.#identity = { producerId, producerEpoch, generation: this.#generation };
    return this.#identity;
  }

  /** The base sequence of the next batch for `partitionKey` under `identity`. */
  nextSequence(partitionKey: string, identity: ProducerIdentity): number {
    const state = this.#sequences.get(partitionKey);
    return state === undefined || state.generation !== identity.generation ? 0 : state.nextSequence;
  }

  /** Called once the broker acknowledged `count` records sent with `baseSequence`. */
  acknowledged(partitionKey: string, identity: ProducerIdentity, baseSequence: number, count: number): void {
    this.#sequences.set(partitionKey, {
      generation: identity.generation,
      nextSequence: sequenceAfter(baseSequence, count),
    });
  }

  /** Drops `identity` (if still current) and the partition's sequence, so the next write starts clean. */
  reset(partitionKey: string, identity: ProducerIdentity): void {
    this.#sequences.delete(partitionKey);
    if (this.#identity?.generation === identity.generation) this.#identity = undefined;
  }
}

/** The base sequence of the batch after one of `count` records sent with `baseSequence`. */
export function sequenceAfter(baseSequence: number, count: number): number {
  return (baseSequence + count) % SEQUENCE_MODULUS;
}
