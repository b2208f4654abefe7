/**
 * The in-memory world the core's unit tests run a PartitionPump in: both clusters on one fake
 * clock, an empty lease store, a capturing logger and metrics; and the pump's deps over it.
 */
import type { TopicPartition } from "../../lib/core/model.js";
import type { ProvenanceSettings } from "../../lib/core/provenance.js";
import type { PartitionPump, PumpDeps, PumpStatus } from "../../lib/core/pump/partition-pump.js";
import { FakeClock, until } from "./fake-clock.js";
import { InMemoryCluster } from "./fake-cluster.js";
import { CapturingLogger, CapturingMetrics } from "./fake-observability.js";
import { InMemoryLeaseStore } from "./memory-lease-store.js";

/** A fresh in-memory world for core tests: both clusters on one fake clock, an empty lease store. */
export function inMemoryWorld() {
  const clock = new FakeClock();
  return {
    clock,
    source: new InMemoryCluster(clock),
    target: new InMemoryCluster(clock),
    store: new InMemoryLeaseStore(),
    logger: new CapturingLogger(),
    metrics: new CapturingMetrics(),
  };
}

/** Runs `pump` until it is caught up (or stops by itself), then stops it; its final status. */
export async function runUntilCaughtUp(clock: FakeClock, pump: PartitionPump): Promise<PumpStatus> {
  const running = pump.run();
  await until(clock, () => pump.status.caughtUp || pump.status.stopReason !== null);
  pump.held.stop();
  return running;
}

/** What a PartitionPump needs from an in-memory world (source → target); no target tail. */
export function pumpDeps(world: ReturnType<typeof inMemoryWorld>): PumpDeps {
  return {
    source: world.source,
    target: world.target,
    sourceAdmin: world.source,
    store: world.store,
    clock: world.clock,
    logger: world.logger,
    metrics: world.metrics,
  };
}

/** The header, aliases and partitions the pump tests copy from `src`/0 to `dst`/0 with. */
export const HEADER = Buffer.from("kafka-mirror.provenance");
export const PROVENANCE: ProvenanceSettings = { header: HEADER, sourceAlias: "A", targetAlias: "B" };
export const src: TopicPartition = { topic: "src", partition: 0 };
export const dst: TopicPartition = { topic: "dst", partition: 0 };

/** An in-memory world with one-partition topics `src` on the source and `dst` on the target. */
export function srcDstWorld(): ReturnType<typeof inMemoryWorld> {
  const world = inMemoryWorld();
  world.source.createTopic(src.topic, 1);
  world.target.createTopic(dst.topic, 1);
  return world;
}
