/**
 * The copy loop of one partition (README "How it works": the pump): from taking a lease to giving
 * it back, read the source, write the target, checkpoint what landed. Imports lib/core's root
 * (model.ts, ports.ts, retry.ts, provenance.ts), plan/model.ts for a route, and lib/errors.ts;
 * nothing in the run loop.
 *
 *   model.ts              the shared types: LeaseEnd (why a hold ended) and Gate
 *   partition-pump.ts     PartitionPump: the loop, its settings and its status
 *   held-lease.ts         the lease held, its gate and the retry until it ends (LeaseGuard)
 *   pump-start.ts         the start-up: fence, tail look, continuity, start offset, pin
 *   source-continuity.ts  does the source still hold what was copied (truncation, retention)
 *   source-epochs.ts      a new leader epoch below what was read: start-up again
 *   source-feed.ts        the reads, ahead of the writes, within the read-ahead budget (read-ahead.ts)
 *   checkpointer.ts       checkpoints: after what landed, deferred while the store is away
 *   target-tail.ts, target-read.ts   what an unfinished write left on the target past the checkpoint
 */
export type { Gate, LeaseEnd } from "./model.js";
export { PartitionPump, type PumpDeps, type PumpSettings, type PumpStatus } from "./partition-pump.js";
