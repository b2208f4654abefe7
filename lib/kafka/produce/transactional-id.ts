/**
 * The transactional.id that owns one source partition's writes. Whoever copies the partition
 * initialises this id, and Kafka's InitProducerId then bumps its epoch, so the previous holder's
 * late produce and EndTxn requests are refused (KIP-98; MirrorMaker 2's exactly-once mode,
 * KIP-618, names its ids per task the same way).
 *
 * Shape: `kafka-mirror.<alias>/<topic>/<partition>`. Aliases and topic names both may contain
 * dots, so dots between the parts would let two partitions share an id (alias `a.b` with topic
 * `c`, and alias `a` with topic `b.c`): the two workers would then fence each other forever.
 * Neither may contain `/`, so this shape names exactly one partition.
 *
 * Length: Kafka stores a transactional.id as a protocol string, at most 32767 bytes. A topic
 * name has at most 249 characters and a config alias at most 100, all ASCII, so an id has at most
 * 13 + 100 + 1 + 249 + 1 + 10 = 374 bytes; the check below only guards callers that skip config
 * validation.
 */
import { ReplicatorError } from "../../errors.js";

export const TRANSACTIONAL_ID_PREFIX = "kafka-mirror.";

/** Kafka's limit on a protocol string, which a transactional.id is. */
export const MAX_TRANSACTIONAL_ID_BYTES = 32_767;

/** Kafka's legal topic-name characters; config aliases use the same set (lib/config/schema.ts). */
const NAME = /^[a-zA-Z0-9._-]+$/;
const MAX_TOPIC_LENGTH = 249;
const MAX_PARTITION = 2 ** 31 - 1;

/** The transactional.id for source partition `topic`/`partition` of the cluster named `alias`. */
export function transactionalIdFor(alias: string, topic: string, partition: number): string {
  const problems: string[] = [];
  if (!NAME.test(alias))
    problems.push(`alias ${JSON.stringify(alias)} is not a non-empty [a-zA-Z0-9._-] name`);
  if (!NAME.test(topic) || topic.length > MAX_TOPIC_LENGTH) {
    problems.push(`topic ${JSON.stringify(topic)} is not a Kafka topic name ([a-zA-Z0-9._-], 1..249 chars)`);
  }
  if (!Number.isInteger(partition) || partition < 0 || partition > MAX_PARTITION) {
    problems.push(`partition ${partition} is not an integer in 0..${MAX_PARTITION}`);
  }
  const id = `${TRANSACTIONAL_ID_PREFIX}${alias}/${topic}/${partition}`;
  if (problems.length === 0 && Buffer.byteLength(id, "utf8") > MAX_TRANSACTIONAL_ID_BYTES) {
    problems.push(`transactional.id would be ${id.length} bytes, Kafka allows ${MAX_TRANSACTIONAL_ID_BYTES}`);
  }
  if (problems.length > 0) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `no transactional.id for this partition: ${problems.join("; ")}`,
      {
        details: { alias, topic, partition, problems },
      },
    );
  }
  return id;
}
