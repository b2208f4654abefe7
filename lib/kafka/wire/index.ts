/**
 * Requests on a broker's connection: the cluster client (cluster-client.ts, one per cluster and
 * adapter: connect, metadata, leader lookup with leader-epochs.ts, one re-route per attempt), its
 * connections and their security (connection.ts, security.ts), Kafka's error codes
 * (error-codes.ts), our request encoders and decoders (fetch.ts, produce.ts, metadata.ts, groups.ts,
 * ... over flexible.ts), ListOffsets (list-offsets.ts), and kafkajs-internals.ts, the only file that
 * calls kafkajs below its public API (with kafkajs-types.ts, kafkajs-metadata.ts). Imports lib/core
 * and lib/errors.ts; not the codec, the reader, the writer or the admin.
 */
export { KafkaClusterClient } from "./cluster-client.js";
