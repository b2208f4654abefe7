/**
 * The reader (README "Reading"): KafkaPartitionReader (source-reader.ts) reads a partition with our
 * own Fetch requests, coalesced per leader broker (fetch-coalescer.ts), decoded by the codec,
 * aborted transactions dropped (read-committed.ts), results shaped in fetch-result.ts; for
 * target.copy "batches" scanned by header and shaped as source batches (fetch-batches.ts). Imports
 * codec/, wire/, lib/core and lib/errors.ts; not the writer or the admin.
 */
export { KafkaPartitionReader } from "./source-reader.js";
