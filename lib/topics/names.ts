/**
 * Kafka's rules for topic names, and the names kafka-mirror never copies. Kept apart from the
 * selection logic so the config schema can validate aliases against the same rules.
 */

/** Kafka refuses longer names (`Topic.MAX_NAME_LENGTH`): 249 leaves room for partition directories. */
export const MAX_TOPIC_NAME_LENGTH = 249;

/** The characters Kafka allows in a topic name (`Topic.LEGAL_CHARS`). */
export const LEGAL_TOPIC_CHARS = /^[a-zA-Z0-9._-]+$/;

/**
 * Topics under this prefix belong to kafka-mirror itself (heartbeats, markers). They are never
 * selected, so two replicators pointed at each other cannot copy each other's bookkeeping.
 */
export const RESERVED_TOPIC_PREFIX = "kafka-mirror.";

/**
 * The prefix Kafka and its vendors use for broker-owned topics: `__consumer_offsets`,
 * `__transaction_state`, `__cluster_metadata` (KRaft), `__amazon_msk_canary` (MSK),
 * `__confluent.support.metrics`. Their contents describe the source cluster's own state
 * (group offsets, transaction coordinators, canaries); copied to another cluster they are
 * meaningless at best and corrupt its coordinators at worst. MirrorMaker 2 excludes `__.*` by
 * default for the same reason. Checking the prefix rather than a fixed list also covers internal
 * topics of versions and vendors we have not seen.
 */
export const INTERNAL_TOPIC_PREFIX = "__";

export function isInternalTopic(topic: string): boolean {
  return topic.startsWith(INTERNAL_TOPIC_PREFIX);
}

export function isReservedTopic(topic: string): boolean {
  return topic.startsWith(RESERVED_TOPIC_PREFIX);
}

/** Why Kafka would refuse `name` as a topic name, or null when it is valid. */
export function topicNameProblem(name: string): string | null {
  if (name.length === 0) return "is empty";
  if (name === "." || name === "..") return `"${name}" is not allowed`;
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    return `is ${name.length} characters long, Kafka allows at most ${MAX_TOPIC_NAME_LENGTH}`;
  }
  if (!LEGAL_TOPIC_CHARS.test(name)) return "contains characters other than [a-zA-Z0-9._-]";
  return null;
}
