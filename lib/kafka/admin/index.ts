/**
 * The admin: topics, partitions and configs (cluster-admin.ts) and consumer groups (group-admin.ts,
 * group-describe.ts, group-refusal.ts). Imports wire/, lib/core and lib/errors.ts; not the codec,
 * the reader or the writer.
 */
export { KafkaClusterAdmin } from "./cluster-admin.js";
export { createGroupAdmin, KafkaGroupAdmin } from "./group-admin.js";
