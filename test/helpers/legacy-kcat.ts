// Old-format (magic 0 and 1) message sets written by an independent producer, librdkafka (kcat),
// and what the test broker stored, read back raw. librdkafka picks its MsgVersion from the
// broker's Produce version: with api.version.request=false and broker.version.fallback=0.9.0 it
// assumes Produce v1 and writes MsgVersion 0; any fallback >= 0.10 turns ApiVersion requests back
// on, so for MsgVersion 1 the broker must advertise Produce v2 at most (the launcher's
// `apiversion 0 0 2`, cluster-wide). Checked with the raw bytes below, not assumed.
import { crc32, gunzipSync } from "node:zlib";
import { FETCH_API_KEY, FETCH_VERSIONS, fetchRequest, IsolationLevel } from "../../lib/kafka/wire/fetch.js";
import { createKafkaCluster, sendRequest } from "../../lib/kafka/wire/kafkajs-internals.js";
import { type KcatRecord, kcatProduce } from "./kcat.js";
import type { MockKafka } from "./mock-kafka.js";

export type LegacyMagic = 0 | 1;
/** The codecs of message formats v0 and v1 (zstd came with v2). */
export type LegacyCompression = "none" | "gzip" | "snappy" | "lz4";
export const LEGACY_CODEC_IDS: Readonly<Record<LegacyCompression, number>> = {
  none: 0,
  gzip: 1,
  snappy: 2,
  lz4: 3,
};

/** Produces `records` as one message set of format v`magic`; v1 limits the cluster to Produce v2. */
export async function kcatProduceLegacy(
  kafka: MockKafka,
  opts: {
    magic: LegacyMagic;
    topic: string;
    compression: LegacyCompression;
    records: readonly KcatRecord[];
  },
): Promise<void> {
  if (opts.magic === 1) await kafka.command("apiversion 0 0 2");
  await kcatProduce({
    brokers: kafka.bootstrapServers,
    topic: opts.topic,
    partition: 0,
    records: opts.records,
    compression: opts.compression,
    // One request for the whole call: the linger outlasts kcat's reading of its input.
    config: {
      "linger.ms": "500",
      ...(opts.magic === 0 ? { "api.version.request": "false", "broker.version.fallback": "0.9.0" } : {}),
    },
  });
}

/** One stored log entry as the broker returned it, parsed here without our decoder. */
export interface RawLegacyEntry {
  readonly offset: number;
  readonly magic: number;
  /** Attributes bits 0-2. */
  readonly codec: number;
  /** The stored CRC equals zlib's CRC-32 of bytes 16..end. */
  readonly crcValid: boolean;
  /** Offsets of a gzip wrapper's inner messages as stored (v1 relative, v0 absolute); else []. */
  readonly innerOffsets: readonly number[];
}

/** Every entry of partition 0 from offset 0 to the log end, one raw Fetch v11 at a time. */
export async function rawLegacyEntries(brokers: readonly string[], topic: string): Promise<RawLegacyEntry[]> {
  const cluster = createKafkaCluster({ brokers, clientId: "legacy-raw", requestTimeoutMs: 10_000 });
  await cluster.connect();
  try {
    await cluster.addMultipleTargetTopics([topic]);
    const [nodeId] = Object.keys(cluster.findLeaderForPartitions(topic, [0]));
    const broker = await cluster.findBroker({ nodeId: Number(nodeId) });
    const entries: RawLegacyEntry[] = [];
    for (let offset = 0, end = 1; offset < end; ) {
      const response = await sendRequest(
        broker,
        "Fetch",
        FETCH_API_KEY,
        FETCH_VERSIONS,
        (v) =>
          fetchRequest(v, {
            maxWaitMs: 0,
            minBytes: 0,
            maxBytes: 1 << 20,
            isolationLevel: IsolationLevel.READ_UNCOMMITTED,
            topics: [{ topic, partitions: [{ partition: 0, fetchOffset: offset, maxBytes: 1 << 20 }] }],
          }),
        10_000,
      );
      const answer = response.topics[0]?.partitions[0];
      if (answer === undefined || answer.errorCode !== 0)
        throw new Error(`Fetch of ${topic}/0 at ${offset} failed`);
      end = answer.highWatermark;
      const fetched = parseEntries(answer.records).filter((e) => e.offset >= offset);
      const last = fetched.at(-1);
      if (last === undefined) break;
      entries.push(...fetched);
      offset = last.offset + 1;
    }
    return entries;
  } finally {
    await cluster.disconnect();
  }
}

function parseEntries(set: Buffer): RawLegacyEntry[] {
  const entries: RawLegacyEntry[] = [];
  for (let pos = 0; pos + 12 <= set.length; ) {
    const end = pos + 12 + set.readInt32BE(pos + 8);
    if (end > set.length) break;
    const magic = set.readInt8(pos + 16);
    const codec = magic < 2 ? set.readInt8(pos + 17) & 7 : set.readInt16BE(pos + 21) & 7;
    entries.push({
      offset: Number(set.readBigInt64BE(pos)),
      magic,
      codec,
      crcValid: magic < 2 && set.readUInt32BE(pos + 12) === crc32(set.subarray(pos + 16, end)),
      innerOffsets: magic < 2 && codec === 1 ? innerOffsets(set.subarray(pos, end), magic) : [],
    });
    pos = end;
  }
  return entries;
}

function innerOffsets(message: Buffer, magic: number): number[] {
  const keyAt = magic === 1 ? 26 : 18;
  const valueAt = keyAt + 4 + Math.max(0, message.readInt32BE(keyAt));
  const length = message.readInt32BE(valueAt);
  const inner = gunzipSync(message.subarray(valueAt + 4, valueAt + 4 + length));
  const offsets: number[] = [];
  for (let pos = 0; pos < inner.length; pos += 12 + inner.readInt32BE(pos + 8)) {
    offsets.push(Number(inner.readBigInt64BE(pos)));
  }
  return offsets;
}
