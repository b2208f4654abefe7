/**
 * The leader epoch a partition's requests carry (KIP-320), kept next to the leader it belongs to.
 * kafkajs's metadata (Metadata v6) names leaders but no epochs; our Metadata v10+
 * (protocol/metadata.ts) names both, and an epoch names one leadership. So an epoch read with
 * leader L is sent only while kafkajs's metadata still routes to L: when it names another
 * leader (kafkajs's own refresh, or the cluster client's after a refusal) the topic is read
 * again. `forget` drops everything when the cluster client refreshes metadata: that is how an
 * epoch answer (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) from an unchanged leader, which moved
 * away and back, gets a fresh epoch on the re-routed call. -1 (no check, as before KIP-320) when
 * the broker has no Metadata v10 or does not tell.
 */
import type { TopicPartition } from "../../core/model.js";
import type { PartitionLeadership } from "./metadata.js";

/** "Do not check": what a request carries when the epoch is unknown. */
export const NO_LEADER_EPOCH = -1;

/** Where a partition's requests go, and the leader epoch they carry. */
export interface PartitionRoute {
  readonly leader: number;
  readonly leaderEpoch: number;
}

/** One topic's leaderships as a broker (`via`, a node id) tells them; null when it cannot. */
export type ReadLeaderships = (topic: string, via: number) => Promise<readonly PartitionLeadership[] | null>;

type Leaderships = ReadonlyMap<number, PartitionLeadership> | null;

export class LeaderEpochs {
  readonly #read: ReadLeaderships;
  /** By topic; null: the broker has no epochs to tell (until `forget`). */
  readonly #known = new Map<string, Leaderships>();
  /** One read per topic at a time, shared by concurrent callers; `forget` disowns them. */
  readonly #reading = new Map<string, Promise<Leaderships>>();

  constructor(read: ReadLeaderships) {
    this.#read = read;
  }

  /** The epoch to send to `leader`, the partition's leader by kafkajs's metadata. */
  async epochFor(tp: TopicPartition, leader: number): Promise<number> {
    const known = this.#known.get(tp.topic);
    if (known === null) return NO_LEADER_EPOCH;
    const held = known?.get(tp.partition);
    if (held !== undefined && held.leader === leader) return held.leaderEpoch;
    const read = await this.#readShared(tp.topic, leader);
    // A fresh read that still names another leader means one of the two views is stale. Its epoch
    // is sent all the same: a broker at another epoch refuses, and the refusal refreshes both,
    // where -1 would let a broker that is no longer (or not yet) that leader answer.
    return read?.get(tp.partition)?.leaderEpoch ?? NO_LEADER_EPOCH;
  }

  /** What a read of the topic's metadata found (null: that broker cannot tell). */
  learn(topic: string, partitions: readonly PartitionLeadership[] | null): void {
    this.#known.set(topic, toMap(partitions));
  }

  forget(): void {
    this.#known.clear();
    this.#reading.clear();
  }

  #readShared(topic: string, via: number): Promise<Leaderships> {
    const pending = this.#reading.get(topic);
    if (pending !== undefined) return pending;
    const ours = () => this.#reading.get(topic) === reading;
    const reading: Promise<Leaderships> = this.#read(topic, via)
      .then((partitions) => {
        const read = toMap(partitions);
        // A read that began before a `forget` may predate the change that caused it: use, don't keep.
        if (ours()) this.#known.set(topic, read);
        return read;
      })
      .finally(() => {
        if (ours()) this.#reading.delete(topic);
      });
    this.#reading.set(topic, reading);
    return reading;
  }
}

function toMap(partitions: readonly PartitionLeadership[] | null): Leaderships {
  return partitions === null ? null : new Map(partitions.map((p) => [p.partition, p]));
}
