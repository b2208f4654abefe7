/**
 * The Kafka adapter, the only code that imports kafkajs. Its folders point one way:
 *
 *   codec/    record batches and message sets, the codec table, checksums (no I/O)
 *   wire/     the cluster client, connections, security, request encoders, kafkajs internals,
 *             and the one retry rule (retry.ts)
 *   read/     KafkaPartitionReader          (uses codec/ and wire/)
 *   produce/  KafkaPartitionWriter          (uses codec/ and wire/)
 *   admin/    KafkaClusterAdmin, KafkaGroupAdmin   (uses wire/)
 * It imports lib/core, lib/config and lib/errors.ts; never another adapter.
 */
export { KafkaClusterAdmin, KafkaGroupAdmin } from "./admin/index.js";
export { KafkaPartitionWriter } from "./produce/index.js";
export { KafkaPartitionReader } from "./read/index.js";
