/**
 * The chaos run's source traffic (scripts/chaos/run.ts): `recordsPerPartition` records into every
 * partition of every topic, `recordsPerRound` per partition at a time, spread over 80% of the
 * fault phase, with acks=all and retries through broker faults. The records of a partition differ from each other
 * (their headers carry a sequence number; only a send repeated after a failure repeats one), so a
 * copy can be traced to its source record by content alone (MirrorMaker 2's copies carry no
 * provenance header).
 */
import { Kafka, logLevel } from "kafkajs";
import { sleep } from "./faults.js";
import type { ChaosOptions } from "./options.js";

/** A record whose value names its topic, partition and sequence number; never text-decoded later. */
function chaosValue(topic: number, partition: number, seq: number): Buffer {
  const out = Buffer.alloc(24);
  out[0] = 0xff;
  out.writeUInt16BE(topic, 1);
  out.writeUInt16BE(partition, 3);
  out.writeUInt32BE(seq, 5);
  out.fill(seq & 0xff, 9);
  return out;
}

export async function produce(
  brokers: string[],
  topics: readonly string[],
  o: ChaosOptions,
  log: (line: string) => void,
): Promise<void> {
  const kafka = new Kafka({
    clientId: "chaos-producer",
    brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 2_000 },
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const perRound = o.recordsPerRound;
  const rounds = Math.ceil(o.recordsPerPartition / perRound);
  const pause = Math.max(0, Math.floor((o.faultPhaseMs * 0.8) / rounds));
  try {
    for (let round = 0; round < rounds; round++) {
      const start = round * perRound;
      const end = Math.min(o.recordsPerPartition, start + perRound);
      await Promise.all(
        topics.map(async (topic, t) => {
          const messages = [];
          for (let p = 0; p < o.partitions; p++) {
            for (let seq = start; seq < end; seq++) {
              messages.push({
                partition: p,
                key: seq % 9 === 0 ? null : Buffer.from([0xfe, p, seq & 0xff]),
                value: seq % 13 === 0 ? null : chaosValue(t, p, seq),
                headers: { seq: Buffer.from(String(seq)), bin: Buffer.from([0xc3, 0x28, seq & 0xff]) },
              });
            }
          }
          for (;;) {
            try {
              await producer.send({ topic, acks: -1, messages });
              return;
            } catch (error) {
              // A failed send may have landed in part: the comparison is against what the
              // source holds, so a repeat here is data like any other.
              log(`producer send failed, retrying: ${String(error)}`);
              await sleep(500);
            }
          }
        }),
      );
      await sleep(pause);
    }
  } finally {
    await producer.disconnect();
  }
}
