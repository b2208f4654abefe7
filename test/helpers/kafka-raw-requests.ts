// Kafka requests the real-Kafka test bed needs and kafkajs 2.2.4 lacks, spoken on a plain socket
// with the wire primitives of kafka-wire.ts: Metadata v8 (kafkajs stops at v6, before partitions
// carry their leader epoch), ElectLeaders v1 (kafkajs has no such call) and ListOffsets v2 with
// an isolation level of our choosing (the last stable offset, independently of lib/kafka).
// Test-bed code: plaintext only, one request per connection, classic (non-flexible) versions
// that every Kafka 4 broker (and the mock) serves.
import { connect } from "node:net";
import { FrameSplitter, WireReader, WireWriter } from "./kafka-wire.js";

const API_LIST_OFFSETS = 2;
const API_METADATA = 3;
const API_ELECT_LEADERS = 43;
const CLIENT_ID = "real-kafka-testbed";
const REQUEST_TIMEOUT_MS = 10_000;

export interface PartitionState {
  readonly partition: number;
  readonly errorCode: number;
  /** -1 while the partition has no leader. */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly replicas: number[];
  readonly isr: number[];
}

export interface ClusterMetadata {
  readonly brokers: { readonly nodeId: number; readonly host: string; readonly port: number }[];
  readonly controllerId: number;
  readonly topics: ReadonlyMap<string, { readonly errorCode: number; readonly partitions: PartitionState[] }>;
}

/** One request, one response; `address` is `host:port` of a PLAINTEXT listener. */
export async function rawRequest(
  address: string,
  apiKey: number,
  version: number,
  body: Buffer,
): Promise<WireReader> {
  const [host, port] = splitAddress(address);
  const correlationId = Math.floor(Math.random() * 0x7fffffff);
  const request = new WireWriter().int16(apiKey).int16(version).int32(correlationId).string(CLIENT_ID, false);
  const frame = request.raw(body).frame();
  const payload = await new Promise<Buffer>((resolve, reject) => {
    const socket = connect({ host, port });
    const splitter = new FrameSplitter();
    const fail = (error: Error): void => {
      socket.destroy();
      reject(new Error(`${address} api ${apiKey} v${version}: ${error.message}`));
    };
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => fail(new Error("timed out")));
    socket.once("error", fail);
    socket.once("close", () => fail(new Error("connection closed before a response")));
    socket.on("data", (chunk: Buffer) => {
      const [first] = splitter.push(chunk);
      if (first === undefined) return;
      socket.removeAllListeners("close");
      socket.destroy();
      resolve(first);
    });
    socket.write(frame);
  });
  const reader = new WireReader(payload);
  const answered = reader.int32();
  if (answered !== correlationId)
    throw new Error(`${address}: correlation id ${answered}, sent ${correlationId}`);
  return reader;
}

/** Metadata v8 for the named topics (every topic when `topics` is null), never auto-creating. */
export async function metadata(address: string, topics: readonly string[] | null): Promise<ClusterMetadata> {
  const body = new WireWriter();
  if (topics === null) body.int32(-1);
  else {
    body.arrayLength(topics.length, false);
    for (const topic of topics) body.string(topic, false);
  }
  // allow_auto_topic_creation, include_cluster_authorized_operations, include_topic_authorized_operations
  body.raw(Buffer.from([0, 0, 0]));
  const r = await rawRequest(address, API_METADATA, 8, body.bytesWritten());
  r.int32(); // throttle_time_ms
  const brokers = array(r, () => {
    const nodeId = r.int32();
    const host = r.string(false) ?? "";
    const port = r.int32();
    r.string(false); // rack
    return { nodeId, host, port };
  });
  r.string(false); // cluster_id
  const controllerId = r.int32();
  const topicEntries = array(r, () => {
    const errorCode = r.int16();
    const name = r.string(false) ?? "";
    r.offset += 1; // is_internal
    const partitions = array(r, () => partitionState(r));
    r.int32(); // topic_authorized_operations
    return [name, { errorCode, partitions }] as const;
  });
  return { brokers, controllerId, topics: new Map(topicEntries) };
}

function partitionState(r: WireReader): PartitionState {
  const errorCode = r.int16();
  const partition = r.int32();
  const leader = r.int32();
  const leaderEpoch = r.int32();
  const replicas = array(r, () => r.int32());
  const isr = array(r, () => r.int32());
  array(r, () => r.int32()); // offline_replicas
  return { partition, errorCode, leader, leaderEpoch, replicas, isr };
}

export interface ElectionResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly message: string | null;
}

export const ElectionType = { preferred: 0, unclean: 1 } as const;

/**
 * ElectLeaders v1 (any broker forwards it to the active controller). `partitions` null elects
 * for every partition of the cluster. Resolves with the per-partition results; a top-level
 * error rejects.
 */
export async function electLeaders(
  address: string,
  type: number,
  partitions: readonly { readonly topic: string; readonly partitions: readonly number[] }[] | null,
  timeoutMs = 10_000,
): Promise<ElectionResult[]> {
  const body = new WireWriter().raw(Buffer.from([type]));
  if (partitions === null) body.int32(-1);
  else {
    body.arrayLength(partitions.length, false);
    for (const entry of partitions) {
      body.string(entry.topic, false).arrayLength(entry.partitions.length, false);
      for (const p of entry.partitions) body.int32(p);
    }
  }
  body.int32(timeoutMs);
  const r = await rawRequest(address, API_ELECT_LEADERS, 1, body.bytesWritten());
  r.int32(); // throttle_time_ms
  const errorCode = r.int16();
  if (errorCode !== 0) throw new Error(`ElectLeaders failed with error code ${errorCode}`);
  return array(r, () => {
    const topic = r.string(false) ?? "";
    return array(r, () => ({ topic, partition: r.int32(), errorCode: r.int16(), message: r.string(false) }));
  }).flat();
}

function array<T>(r: WireReader, item: () => T): T[] {
  const length = r.arrayLength(false);
  return Array.from({ length: Math.max(length, 0) }, item);
}

function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(":");
  const port = Number(address.slice(colon + 1));
  if (colon < 0 || !Number.isInteger(port)) throw new Error(`not a host:port address: ${address}`);
  return [address.slice(0, colon), port];
}

/**
 * ListOffsets v2 LATEST of one partition, asked of `address` (the partition's leader): the high
 * watermark with read_uncommitted; with read_committed the last stable offset, which stops at the
 * first record of a transaction still open.
 */
export async function latestOffset(
  address: string,
  topic: string,
  partition: number,
  isolation: "read_uncommitted" | "read_committed",
): Promise<number> {
  const body = new WireWriter()
    .int32(-1) // replica_id: a client
    .raw(Buffer.from([isolation === "read_committed" ? 1 : 0]))
    .arrayLength(1, false)
    .string(topic, false)
    .arrayLength(1, false)
    .int32(partition)
    .int64(-1n); // LATEST
  const r = await rawRequest(address, API_LIST_OFFSETS, 2, body.bytesWritten());
  r.int32(); // throttle_time_ms
  const answers = array(r, () => {
    r.string(false); // topic
    return array(r, () => {
      const answered = { partition: r.int32(), errorCode: r.int16() };
      r.int64(); // timestamp
      return { ...answered, offset: Number(r.int64()) };
    });
  }).flat();
  const answer = answers.find((a) => a.partition === partition);
  if (answer === undefined || answer.errorCode !== 0) {
    throw new Error(
      `ListOffsets ${topic}[${partition}] at ${address}: error ${answer?.errorCode ?? "no answer"}`,
    );
  }
  return answer.offset;
}
