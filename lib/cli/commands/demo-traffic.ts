/**
 * The demo's sample traffic, shaped like the field notes' BI topics: text keys (some absent),
 * JSON-ish values, every 10th a tombstone, two headers (one with a null value now and then) and
 * event timestamps that are not in offset order. Generated, so nothing is read back as text.
 */
import type { MirrorRecord, RecordHeader } from "../../core/model.js";
import type { TargetWriter } from "../../core/ports.js";

export const DEMO_TOPICS = ["BIN-BI-TOPIC", "PUSH-BI-TOPIC", "USER-BI-TOPIC"] as const;
/** On the source but left out by the whitelist: it must never appear on the target. */
export const DEMO_UNLISTED_TOPIC = "SCRIPT-BI-TOPIC";
export const DEMO_PARTITIONS = 8;
export const DEMO_RECORDS_PER_PARTITION = 2_500;

export function sampleRecord(topic: string, partition: number, i: number): MirrorRecord {
  const id = partition * DEMO_RECORDS_PER_PARTITION + i;
  const headers: RecordHeader[] = [
    { key: Buffer.from("trace-id"), value: Buffer.from(`${topic.toLowerCase()}-${id.toString(16)}`) },
    { key: Buffer.from("schema"), value: i % 17 === 0 ? null : Buffer.from("v2") },
  ];
  return {
    offset: i,
    timestamp: 1_700_000_000_000 + id * 40 - (i % 3) * 1_000,
    key: i % 25 === 0 ? null : Buffer.from(`user-${(id * 7919) % 5_000}`),
    value:
      i % 10 === 0
        ? null
        : Buffer.from(
            `{"event":"${topic}","seq":${id},"amount":${(id * 37) % 1_000},"pad":"${"x".repeat(i % 64)}"}`,
          ),
    headers,
  };
}

/** Writes the sample records to every partition of `topics`, then closes `writer`. */
export async function writeSampleTraffic(writer: TargetWriter, topics: readonly string[]): Promise<void> {
  try {
    await Promise.all(
      topics.flatMap((topic) =>
        Array.from({ length: DEMO_PARTITIONS }, (_, partition) =>
          writer.write(
            { topic, partition },
            Array.from({ length: DEMO_RECORDS_PER_PARTITION }, (_, i) => sampleRecord(topic, partition, i)),
          ),
        ),
      ),
    );
  } finally {
    await writer.close();
  }
}
