/**
 * The core: replication logic and the ports it depends on, with no library below it (no kafkajs,
 * no AWS SDK). It imports nothing outside lib/core but lib/errors.ts (`npm run structure` checks).
 *
 *   ports.ts, model.ts   the ports (SourceReader, TargetWriter, ClusterAdmin, LeaseStore, ...) and
 *                        the data they pass; retry.ts the one retry helper; clock.ts; provenance.ts
 *   lease/               the lease protocol over a narrow table port, and its in-memory backend
 *   plan/                topic planning: which partitions are mirrored and where they land
 *   pump/                the copy loop of one partition
 *   run/                 one worker's run: plan, claim, pump, renew, release
 * The folders point one way: run/ uses pump/, plan/ and lease/; pump/ uses plan/'s model.
 */
export type * from "./model.js";
export type * from "./ports.js";
export { Worker } from "./run/index.js";
