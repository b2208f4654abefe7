/**
 * kafkajs 2.2.4's Metadata answers, made to survive a partition without a leader. Its parser
 * (every version, v0 to v6, shares v0's) throws the whole answer away when any partition carries
 * an error, and its cluster asks for every topic of the cluster whenever it refreshes with no
 * topic of interest yet: so one partition whose replicas were all down, in any topic, failed
 * every call of every adapter (connect, the broker list, topic listing), retried by kafkajs and
 * then by us until the round ended. Seen on real Kafka: a bystander topic with one replica on a
 * killed broker stopped the planning of an unrelated mirror; the mock never answers
 * LEADER_NOT_AVAILABLE. Such a partition is now kept in the metadata as Kafka describes it (leader
 * -1: partitionLeader answers LEADER_NOT_AVAILABLE for that partition alone); topic-level errors
 * and every other partition error still fail the answer as before.
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/** Partition errors that say "no leader right now", not "this answer is wrong". */
export const LEADERLESS_PARTITION_ERRORS: ReadonlySet<number> = new Set([
  5, // LEADER_NOT_AVAILABLE: every replica that could lead is down
  9, // REPLICA_NOT_AVAILABLE: a replica is down (older versions flag it on the partition)
  72, // LISTENER_NOT_FOUND: the leader has no listener of the name we connected with
]);

interface DecodedMetadata {
  readonly topicMetadata: readonly {
    readonly topicErrorCode: number;
    readonly partitionMetadata: readonly { readonly partitionErrorCode: number }[];
  }[];
}
type Parse = (data: DecodedMetadata) => Promise<DecodedMetadata>;
interface ResponseModule {
  parse: Parse;
}

/**
 * kafkajs's parse for `data` with the leaderless partitions' errors cleared for the check (the
 * partitions themselves are kept as they were, their leader -1).
 */
export function tolerantParse(original: Parse): Parse {
  return async (data) => {
    const checked = {
      ...data,
      topicMetadata: data.topicMetadata.map((t) => ({
        ...t,
        partitionMetadata: t.partitionMetadata.filter(
          (p) => !LEADERLESS_PARTITION_ERRORS.has(p.partitionErrorCode),
        ),
      })),
    };
    await original(checked);
    return data;
  };
}

const METADATA_VERSIONS = [0, 1, 2, 3, 4, 5, 6] as const;
let patched = false;

/** Once per process: the Metadata response modules kafkajs looks up for each request. */
export function tolerateLeaderlessPartitions(): void {
  if (patched) return;
  patched = true;
  for (const v of METADATA_VERSIONS) {
    const module = require(`kafkajs/src/protocol/requests/metadata/v${v}/response.js`) as ResponseModule;
    module.parse = tolerantParse(module.parse);
  }
}
