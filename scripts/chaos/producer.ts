/**
 * The chaos run's source traffic (scripts/chaos/run.ts): `recordsPerPartition` records into every
 * partition of every topic, `recordsPerRound` per partition at a time, spread over 80% of the
 * fault phase, with acks=all and retries through broker faults. The records of a partition differ from each other
 * (their headers carry a sequence number; only a send repeated after a failure repeats one), so a
 * copy can be traced to its source record by content alone (MirrorMaker 2's copies carry no
 * provenance header). Every other round is sent gzipped: source batches of two codecs, so that
 * under a target.compression some pass as they came and others are recompressed.
 */
import { CompressionTypes, Kafka, logLevel, type Message, type Producer } from "kafkajs";
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

/** Records `start` (included) to `end` of one partition of topic number `t`. */
function chaosRecords(t: number, partition: number, start: number, end: number): Message[] {
  const messages: Message[] = [];
  for (let seq = start; seq < end; seq++) {
    messages.push({
      partition,
      key: seq % 9 === 0 ? null : Buffer.from([0xfe, partition, seq & 0xff]),
      value: seq % 13 === 0 ? null : chaosValue(t, partition, seq),
      headers: { seq: Buffer.from(String(seq)), bin: Buffer.from([0xc3, 0x28, seq & 0xff]) },
    });
  }
  return messages;
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
        topics.map((topic, t) => {
          const byPartition = Array.from({ length: o.partitions }, (_, p) => chaosRecords(t, p, start, end));
          return sendPerPartition(producer, topic, byPartition, log, round % 2 === 1);
        }),
      );
      await sleep(pause);
    }
  } finally {
    await producer.disconnect();
  }
}

/**
 * Sends each partition's records on its own, retrying a failed send until it succeeds. Not one
 * send for the topic: kafkajs 2.2.4's send (producer/sendMessages.js) keeps the response of each
 * broker that answered and, when another broker failed (NOT_LEADER_OR_FOLLOWER after a leader
 * move), retries only brokers without a response, after a metadata refresh; a partition whose
 * leader moved to a broker that had answered is never sent, and the send resolves. Under the
 * chaos run's leader moves that dropped a whole round of a partition (on real Kafka 50 of 7,200
 * records: "only 7150 records produced"). A send that reaches one broker cannot skip anything.
 */
export async function sendPerPartition(
  producer: Producer,
  topic: string,
  byPartition: readonly Message[][],
  log: (line: string) => void,
  gzip = false,
): Promise<void> {
  const compression = gzip ? CompressionTypes.GZIP : CompressionTypes.None;
  await Promise.all(
    byPartition.map(async (messages) => {
      if (messages.length === 0) return;
      for (;;) {
        try {
          await producer.send({ topic, acks: -1, messages, compression });
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
}
