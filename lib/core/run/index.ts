/**
 * One replication run of one worker (README "The worker"): plan, claim leases as the lease leader
 * assigned them, run a pump per held partition, renew, and end cleanly by the deadline. Imports
 * the rest of lib/core (lease/, plan/, pump/ and the root) and lib/errors.ts, nothing else.
 *
 *   worker.ts                  Worker.replicate(deadline): the run loop
 *   worker-settings.ts         its settings, their checks, and what each pump gets of them
 *   lease-coordinator.ts       who claims what, and when (claims, handoffs, releases)
 *   lease-handoffs.ts          handoffs no pump acts on: passed on, or withdrawn at the run's end
 *   lease-leader.ts, lease-assignment.ts   the leader's role and its assignment of partitions
 *   lease-round.ts             one logged coordination round (lease-round-model.ts its types)
 *   ended-terms.ts             the pumps that ended
 *   run-leases.ts              the leases held in this run: renewals and release
 *   topic-watch.ts             planning again every discovery interval, beside the run loop
 *   failure-backoff.ts, failure-report.ts   a failed partition's backoff and its report
 *   run-summary.ts             what the run did; transaction-timeout.ts the fenced writes' timeout
 */
export type { RunSummary } from "./run-summary.js";
export { type ReplicateOptions, Worker, type WorkerOptions } from "./worker.js";
