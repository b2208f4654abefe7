/**
 * Reads whole partitions for comparisons in tests, through our own reader (full fidelity:
 * header order, null header values, byte keys).
 */
import type { MirrorRecord, TopicPartition } from "../../lib/core/model.js";
import type { ClusterAdmin, SourceReader, TargetWriter } from "../../lib/core/ports.js";
import { DEFAULT_PROVENANCE_HEADER, decodeProvenance } from "../../lib/core/provenance.js";
import { isReplicatorError } from "../../lib/errors.js";
import { KafkaClusterAdmin } from "../../lib/kafka/admin/cluster-admin.js";
import { KafkaPartitionReader, type SourceIsolationLevel } from "../../lib/kafka/read/source-reader.js";
import { stableOffsetReaches } from "./kafka-eventually.js";

/** Every record of a partition from its log start to its current end, in order. */
export async function readPartition(
  reader: SourceReader,
  admin: ClusterAdmin,
  tp: TopicPartition,
): Promise<MirrorRecord[]> {
  const [offsets] = await admin.listOffsets(tp.topic, [tp.partition]);
  if (offsets === undefined) throw new Error(`no offsets for ${tp.topic}/${tp.partition}`);
  const records: MirrorRecord[] = [];
  let offset = offsets.logStartOffset;
  while (offset < offsets.logEndOffset) {
    const fetched = await reader.fetch(tp, offset, { maxRecords: 50_000, maxBytes: 4 << 20, maxWaitMs: 0 });
    if (fetched.nextOffset <= offset)
      throw new Error(`no progress reading ${tp.topic}/${tp.partition} at ${offset}`);
    records.push(...fetched.records);
    offset = fetched.nextOffset;
  }
  return records;
}

/** A reader and an admin of one cluster, for reading whole partitions in tests and checks. */
export class ClusterView {
  readonly admin: KafkaClusterAdmin;
  readonly reader: KafkaPartitionReader;
  readonly #brokers: readonly string[];

  /** `isolationLevel` is the reader's (@default "read_committed"); the admin's offsets are the high watermark's. */
  constructor(brokers: readonly string[], clientId?: string, isolationLevel?: SourceIsolationLevel) {
    this.#brokers = brokers;
    const options = clientId === undefined ? { brokers } : { brokers, clientId };
    this.admin = new KafkaClusterAdmin(options);
    this.reader = new KafkaPartitionReader(
      isolationLevel === undefined ? options : { ...options, isolationLevel },
    );
  }

  read(tp: TopicPartition): Promise<MirrorRecord[]> {
    return readPartition(this.reader, this.admin, tp);
  }

  /**
   * Until every transaction below the partition's high watermark has its marker (the last stable
   * offset reaches it), bounded: for reading what writers that have stopped committed. Their
   * commit returned before the coordinator wrote the markers (kafka-eventually.ts); until then a
   * read_committed read stops short of the end `read` listed.
   */
  async settled(tp: TopicPartition): Promise<void> {
    const [offsets] = await this.admin.listOffsets(tp.topic, [tp.partition]);
    if (offsets === undefined) throw new Error(`no offsets for ${tp.topic}/${tp.partition}`);
    await stableOffsetReaches(this.#brokers, tp, offsets.logEndOffset);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.reader.close(), this.admin.close()]);
  }
}

const PROVENANCE_HEADER = Buffer.from(DEFAULT_PROVENANCE_HEADER);

/**
 * A comparable, payload-preserving form of a record, offset excluded (it differs by side). The
 * provenance header kafka-mirror appends to every copy (lib/core/provenance.ts) is left out when
 * it is the record's last header and decodes as one: it is the only intended difference.
 */
export function recordImage(record: MirrorRecord): string {
  const bytes = (b: Buffer | null) => (b === null ? "null" : b.toString("hex"));
  const last = record.headers.at(-1);
  const own = last?.key.equals(PROVENANCE_HEADER) === true && decodeProvenance(last.value) !== null;
  const kept = own ? record.headers.slice(0, -1) : record.headers;
  const headers = kept.map((h) => `${bytes(h.key)}=${bytes(h.value)}`).join(",");
  return `${record.timestamp}|${bytes(record.key)}|${bytes(record.value)}|${headers}`;
}

/**
 * The first index where two partitions differ, or -1 when they are equal record for record.
 * Reports rather than asserts so a failure names the partition and offset.
 */
export function firstDifference(a: readonly MirrorRecord[], b: readonly MirrorRecord[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const left = a[i];
    const right = b[i];
    if (left === undefined || right === undefined || recordImage(left) !== recordImage(right)) return i;
  }
  return a.length === b.length ? -1 : n;
}

/**
 * Committed records in a partition of `view`'s cluster, for polling a copy in progress: 0 while
 * the topic or partition does not exist yet, -1 while it cannot be read yet: a transaction is open
 * in it (a read_committed read stops there), or a partition just created is not yet served by its
 * leader (real Kafka answers NOT_LEADER_OR_FOLLOWER until the leader has applied the change).
 */
export async function committedCount(view: ClusterView, tp: TopicPartition): Promise<number> {
  const listed = (await view.admin.listTopics()).find((t) => t.name === tp.topic);
  if (listed === undefined || listed.partitions <= tp.partition) return 0;
  try {
    return (await view.read(tp)).length;
  } catch (error) {
    if (error instanceof Error && /no progress reading/.test(error.message)) return -1;
    if (isReplicatorError(error) && error.retryable) return -1;
    throw error;
  }
}

/** Writes records as a test's producer, retrying while its metadata does not know a new partition yet. */
export async function produceRetrying(
  writer: TargetWriter,
  tp: TopicPartition,
  records: readonly MirrorRecord[],
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await writer.write(tp, records);
      return;
    } catch (error) {
      if (attempt >= 20 || !isReplicatorError(error) || !error.retryable) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * The last stable offset of `tp` while a transaction is open in it (a read_committed fetch
 * reports the LSO as its high watermark, a read_uncommitted one the log end), else null.
 */
export async function openTransactionAt(
  brokers: readonly string[],
  tp: TopicPartition,
): Promise<number | null> {
  const committed = new KafkaPartitionReader({ brokers, clientId: "open-txn-probe" });
  const everything = new KafkaPartitionReader({
    brokers,
    clientId: "open-txn-probe",
    isolationLevel: "read_uncommitted",
  });
  const limits = { maxRecords: 1, maxBytes: 1024, maxWaitMs: 0 };
  try {
    const [stable, end] = await Promise.all([
      committed.fetch(tp, 0, limits),
      everything.fetch(tp, 0, limits),
    ]);
    return stable.highWatermark < end.highWatermark ? stable.highWatermark : null;
  } finally {
    await Promise.allSettled([committed.close(), everything.close()]);
  }
}
