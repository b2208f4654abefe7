/**
 * The writer (README "Writing"): KafkaPartitionWriter (target-writer.ts) writes a partition's batches
 * with acks=all and sequence numbers, in groups on the leader's connection (pipelined-send.ts),
 * through the producer session (producer-session.ts, producer-state.ts), records or source batches
 * alike (produce-batch.ts), and judges each answer
 * (produce-outcome.ts); fenced writes run in a transaction per partition (transactional-write.ts,
 * transaction-producers.ts, transaction-coordinator.ts, transactional-id.ts). Shared types in
 * model.ts. Imports codec/, wire/, lib/core and lib/errors.ts; not the reader or the admin.
 */
export { KafkaPartitionWriter } from "./target-writer.js";
