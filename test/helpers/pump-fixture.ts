/**
 * The in-memory world the core's unit tests run a PartitionPump in: both clusters on one fake
 * clock, an empty lease store, a capturing logger and metrics; and the pump's deps over it.
 */
import type { PartitionPump, PumpDeps, PumpStatus } from "../../lib/core/partition-pump.js";
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
