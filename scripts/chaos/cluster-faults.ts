/**
 * The cluster side of a chaos run's faults, for either kind of cluster (scripts/chaos/world.ts):
 * the broker-fault loops, the source leader mover, and putting every broker back once the fault
 * phase is over. On the mock: broker down/up, leader moves, injected errors and RTT (faults.ts).
 * On real Kafka: broker SIGKILLs and SIGSTOPs, one broker per cluster at a time, and leader moves
 * through the Admin API (real-faults.ts).
 */
import { brokerFaults, type FaultContext, type LeaderMover, stream } from "./faults.js";
import type { ChaosOptions } from "./options.js";
import {
  ClusterLock,
  type RealCluster,
  realBrokerFaults,
  realLeaderMover,
  waitForFullIsr,
} from "./real-faults.js";
import type { Clusters } from "./world.js";

export interface ClusterFaults {
  /** The broker-fault loops, running; each resolves when the fault phase is over. */
  readonly loops: Promise<void>[];
  /** Moves leaders of source partitions for moveLeaders (faults.ts). */
  readonly sourceMover: LeaderMover;
}

/** Starts the broker-fault loops of both clusters. */
export function startClusterFaults(
  o: ChaosOptions,
  clusters: Clusters,
  ctx: FaultContext,
  topics: readonly string[],
): ClusterFaults {
  if (clusters.kind === "mock") {
    const { src, dst } = clusters;
    return {
      loops: [
        brokerFaults(ctx, stream(o.seed, 2), o.faultEveryMs, { src, dst, topics, partitions: o.partitions }),
      ],
      sourceMover: {
        brokers: 3,
        moveLeader: async (topic, partition, broker) => {
          await src.setLeader(topic, partition, broker);
          return broker;
        },
      },
    };
  }
  const source: RealCluster = { name: "source", kafka: clusters.src, lock: new ClusterLock() };
  const target: RealCluster = { name: "target", kafka: clusters.dst, lock: new ClusterLock() };
  // Each cluster on its own stream: one cluster's slow healing must not shift the other's draws.
  // A 1-broker cluster gets none: its broker down is the whole cluster down, an outage, not a fault.
  const faulty = (c: RealCluster) => c.kafka.brokerIds.length === 3 && o.brokerChaos.maxPerCluster > 0;
  const loops = [
    ...(faulty(source) ? [realBrokerFaults(ctx, stream(o.seed, 2), o.brokerChaos, source)] : []),
    ...(faulty(target) ? [realBrokerFaults(ctx, stream(o.seed, 7), o.brokerChaos, target)] : []),
  ];
  return { loops, sourceMover: realLeaderMover(source) };
}

/** Every broker up, thawed and (real Kafka) back in the ISR, so the catch-up runs on whole clusters. */
export async function restoreBrokers(
  o: ChaosOptions,
  clusters: Clusters,
  log: (line: string) => void,
): Promise<void> {
  if (clusters.kind === "mock") {
    for (const cluster of [clusters.src, clusters.dst]) {
      for (let b = 1; b <= 3; b++) {
        await cluster.brokerUp(b);
        await cluster.setRtt(b, 0);
      }
    }
    return;
  }
  for (const cluster of [clusters.src, clusters.dst]) {
    try {
      // A broker whose restart failed in the fault loop (its cluster's faults stopped there).
      for (const b of cluster.brokerIds) if (cluster.pid(b) === undefined) await cluster.restartBroker(b);
      await waitForFullIsr(cluster, o.brokerChaos.healTimeoutMs);
    } catch (error) {
      log(`a cluster did not come back whole: ${String(error).split("\n")[0]}`);
    }
  }
}
