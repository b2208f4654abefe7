/**
 * Broker faults of a chaos run on real Apache Kafka (scripts/chaos/run.ts, `--kafka real`): per
 * cluster, brokers SIGKILLed and restarted on their data, or SIGSTOPped and SIGCONTed, one at a
 * time; after each, a preferred-leader election moves leaders back to the returning broker, as
 * Kafka's own auto.leader.rebalance would (the test bed turns it off so that leaders move only
 * when told). Clean source leader changes go through the Admin API (moveLeader: a reassignment
 * that reorders the replicas, then a preferred election), under the same per-cluster lock.
 * Mock-only faults (injected request errors, RTT) have no real counterpart here.
 */
import { metadata } from "../../test/helpers/kafka-raw-requests.js";
import type { RealKafka } from "../../test/helpers/real-kafka.js";
import { between, type FaultContext, type LeaderMover, type Random, sleep } from "./faults.js";
import type { BrokerChaosOptions } from "./options.js";

/**
 * Runs one cluster's changes to brokers and leaders one after the other. A broker fault holds it
 * from the fault until the cluster healed, so a leader move never aims at a dead or frozen broker,
 * and two broker faults never overlap (see realBrokerFaults).
 */
export class ClusterLock {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(work, work);
    this.#tail = next.catch(() => undefined);
    return next;
  }
}

export interface RealCluster {
  /** "source" or "target", for the log. */
  readonly name: string;
  readonly kafka: RealKafka;
  readonly lock: ClusterLock;
}

/**
 * Broker SIGKILLs and SIGSTOPs on one cluster until the fault phase ends. At most one broker of
 * the cluster is down or frozen at a time, and the next fault waits until that broker is back in
 * the ISR of every partition (internal topics included): with RF 3 and min.insync.replicas 2, two
 * brokers out at once leave partitions below min.isr (acks=all writes refused, and the
 * transaction state log with them), or with no leader at all; and a broker killed while another
 * is still catching up can take the only other in-sync copy of a partition with it. Either is an
 * outage no replicator can copy through, not the fault this run is about. When a cluster fails to
 * heal in time, its faults stop (logged), rather than risk a second broker.
 */
export async function realBrokerFaults(
  ctx: FaultContext,
  random: Random,
  options: BrokerChaosOptions,
  cluster: RealCluster,
): Promise<void> {
  const { kafka, name } = cluster;
  for (let n = 0; n < options.maxPerCluster && Date.now() < ctx.faultsEnd; n++) {
    await sleep(between(random, options.everyMs));
    if (Date.now() >= ctx.faultsEnd) break;
    const broker = kafka.brokerIds[Math.floor(random() * kafka.brokerIds.length)] ?? 1;
    const kill = random() < options.killShare;
    const pauseMs = between(random, kill ? options.downMs : options.frozenMs);
    const healed = await cluster.lock.run(async () => {
      try {
        await brokerFault(ctx, cluster, broker, kill, pauseMs);
      } catch (error) {
        ctx.log(`${name} broker ${broker} fault failed: ${String(error).split("\n")[0]}`);
      }
      return heal(ctx, cluster, options.healTimeoutMs);
    });
    if (!healed) return;
  }
}

/** One broker SIGKILLed and restarted after `pauseMs`, or frozen for `pauseMs`. */
async function brokerFault(
  ctx: FaultContext,
  { kafka, name }: RealCluster,
  broker: number,
  kill: boolean,
  pauseMs: number,
): Promise<void> {
  if (kill) {
    await kafka.killBroker(broker);
    ctx.counts.broker_kills++;
    ctx.counts.broker_faults++;
    ctx.log(`broker kill: ${name} broker ${broker}, restart in ${pauseMs} ms`);
    await sleep(pauseMs);
    await kafka.restartBroker(broker);
  } else {
    kafka.freezeBroker(broker);
    ctx.counts.broker_freezes++;
    ctx.counts.broker_faults++;
    ctx.log(`broker freeze: ${name} broker ${broker} for ${pauseMs} ms`);
    await sleep(pauseMs);
    kafka.thawBroker(broker);
  }
}

/**
 * Waits until every replica is in sync again, then moves leaders back to their preferred replica.
 * The election is retried (from the ISR wait): once, at a load of 18, it found the preferred
 * leader of a dozen partitions unavailable (PREFERRED_LEADER_NOT_AVAILABLE) right after every
 * broker's Metadata had shown full ISRs, a broker that just came back being briefly out again.
 */
async function heal(ctx: FaultContext, cluster: RealCluster, timeoutMs: number): Promise<boolean> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await waitForFullIsr(cluster.kafka, Math.max(1, deadline - Date.now()));
      await cluster.kafka.electPreferredLeaders();
      ctx.counts.preferred_elections++;
      const took = Date.now() - started;
      ctx.log(`${cluster.name} healed in ${took} ms: every replica in sync, preferred leaders elected`);
      return true;
    } catch (error) {
      const why = String(error).split("\n")[0]?.slice(0, 300);
      if (Date.now() > deadline) {
        ctx.log(`${cluster.name} did not heal, its broker faults stop here: ${why}`);
        return false;
      }
      if (attempt === 1) ctx.log(`${cluster.name} healing, retrying: ${why}`);
      await sleep(1_000);
    }
  }
}

/**
 * Resolves once every broker answers Metadata and each one's view has a leader and a full ISR
 * for every partition of every topic. Every broker's view, not one: brokers learn ISR changes
 * from the metadata log at different moments, and the next fault may take any of them.
 */
export async function waitForFullIsr(kafka: RealKafka, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let behind = "no answer yet";
  for (;;) {
    try {
      behind = await notInSync(kafka);
      if (behind === "") return;
    } catch (error) {
      behind = String(error);
    }
    if (Date.now() > deadline) throw new Error(`not in sync after ${timeoutMs} ms: ${behind}`);
    await sleep(500);
  }
}

/** "" when in sync, else what is not (the first partition found). */
async function notInSync(kafka: RealKafka): Promise<string> {
  for (const address of kafka.bootstrapServers) {
    const view = await metadata(address, null);
    for (const [topic, { partitions }] of view.topics) {
      for (const p of partitions) {
        if (p.leader < 0 || p.isr.length < p.replicas.length) {
          return `${address} sees ${topic}[${p.partition}] leader ${p.leader}, ISR [${p.isr}] of [${p.replicas}]`;
        }
      }
    }
  }
  return "";
}

/**
 * Clean source leader changes through the Admin API, under the source's lock (never during a
 * broker fault). When the drawn broker already leads, another in-sync replica takes over: a move
 * must bump the leader epoch to count.
 */
export function realLeaderMover(cluster: RealCluster): LeaderMover {
  const { kafka } = cluster;
  return {
    brokers: kafka.brokerIds.length,
    moveLeader: (topic, partition, broker) =>
      cluster.lock.run(async () => {
        const state = await kafka.partitionState(topic, partition);
        const candidates = [broker, ...kafka.brokerIds.filter((b) => b !== broker)];
        const to = candidates.find((b) => b !== state.leader && state.isr.includes(b));
        if (to === undefined) throw new Error(`no in-sync replica of ${topic}[${partition}] to move to`);
        await kafka.moveLeader(topic, partition, to);
        return to;
      }),
  };
}
