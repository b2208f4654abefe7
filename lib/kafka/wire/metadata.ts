/**
 * Metadata v10-v12 for one topic, for what kafkajs 2.2.4's Metadata (v6) lacks: the topic id
 * (v10+) and each partition's leader epoch (v7+), read with the leader it belongs to (an epoch
 * names one leadership). A flexible version: see flexible.ts.
 */
import { FlexReader, FlexWriter } from "./flexible.js";

export const METADATA_API_KEY = 3;
/** Preferred first. */
export const METADATA_ID_VERSIONS = [12, 11, 10] as const;

export interface TopicIdentity {
  readonly errorCode: number;
  /** 32 hex digits, or null when the broker has none. */
  readonly topicId: string | null;
  readonly partitions: readonly PartitionLeadership[];
}

export interface PartitionLeadership {
  readonly partition: number;
  /** Node id; -1 while the partition has no leader. */
  readonly leader: number;
  /** -1 when the broker does not tell. */
  readonly leaderEpoch: number;
}

export function encodeMetadataRequest(version: number, topic: string): Buffer {
  const w = new FlexWriter()
    .noTags() // request header v2: tagged fields after the client id kafkajs writes
    .uvarint(2) // one topic
    .zeroUuid()
    .compactString(topic)
    .noTags()
    .int8(0); // allow_auto_topic_creation: never create a source topic by looking at it
  if (version <= 10) w.int8(0); // include_cluster_authorized_operations
  return w.int8(0).noTags().toBuffer(); // include_topic_authorized_operations
}

export function decodeMetadataResponse(version: number, payload: Buffer): TopicIdentity | null {
  const r = new FlexReader(payload);
  r.skipTags(); // response header v1
  r.int32(); // throttle_time_ms
  r.compactArray((b) => {
    b.int32();
    b.compactString();
    b.int32();
    b.compactString();
    b.skipTags();
  });
  r.compactString(); // cluster_id
  r.int32(); // controller_id
  const topics = r.compactArray((t) => {
    const errorCode = t.int16();
    t.compactString();
    const topicId = t.uuid();
    t.int8(); // is_internal
    const partitions = t.compactArray((p) => {
      p.int16();
      const partition = p.int32();
      const leader = p.int32();
      const leaderEpoch = p.int32();
      for (let i = 0; i < 3; i++) p.compactArray((n) => n.int32()); // replicas, isr, offline
      p.skipTags();
      return { partition, leader, leaderEpoch };
    });
    t.int32(); // topic_authorized_operations
    t.skipTags();
    return { errorCode, topicId, partitions };
  });
  if (version <= 10) r.int32(); // cluster_authorized_operations
  return topics[0] ?? null;
}
