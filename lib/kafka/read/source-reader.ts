/**
 * SourceReader over kafkajs's Cluster and our own Fetch v11: reads partitions from explicit
 * offsets with no consumer group, decodes record batches with our codec so bytes and header order
 * survive exactly. Fetch and OffsetForLeaderEpoch carry the partition's current leader epoch
 * (KIP-320, from the cluster client's `route`), so a broker that is not at that epoch, a deposed
 * leader or one our stale metadata still names, refuses instead of answering from its own log;
 * the refusal re-routes the call once with fresh metadata, as NOT_LEADER_OR_FOLLOWER does.
 */
import type { CompressionCodec } from "../../config/compression.js";
import type {
  FetchedBatches,
  FetchedRecords,
  FetchLimits,
  FetchProgress,
  MirrorRecord,
  SourceBatch,
  TopicPartition,
} from "../../core/model.js";
import type { Logger, PartitionIdentity, SourceReader } from "../../core/ports.js";
import { describeError, ReplicatorError } from "../../errors.js";
import { type CrcCheck, contentCrcOnDemand, scanRecordSet } from "../codec/pass-through.js";
import { decodeRecordBatches } from "../codec/record-batch.js";
import { answerPool } from "../wire/answer-pool.js";
import {
  type ClusterClientOptions,
  KafkaClusterClient,
  type PartitionRoute,
} from "../wire/cluster-client.js";
import { translateKafkajsError } from "../wire/connection.js";
import { KafkaErrorCode, KafkaPartitionError } from "../wire/error-codes.js";
import { type FetchPartitionResponse, IsolationLevel, readableEnd } from "../wire/fetch.js";
import { listPartitionOffsets } from "../wire/list-offsets.js";
import {
  OFFSET_FOR_LEADER_EPOCH_API_KEY,
  OFFSET_FOR_LEADER_EPOCH_VERSIONS,
  offsetForLeaderEpochRequest,
} from "../wire/offset-for-leader-epoch.js";
import { sliceBatches } from "./fetch-batches.js";
import { brokerFetchSender, FetchCoalescer } from "./fetch-coalescer.js";
import { type Slice, type SliceRoom, slicePartition } from "./fetch-result.js";
import { abortedBatches, dropAborted } from "./read-committed.js";

export interface KafkaPartitionReaderOptions extends ClusterClientOptions {
  /**
   * read_committed skips aborted transactional records and stops at the last stable offset;
   * read_uncommitted returns every record up to the high watermark (checks that want to see what
   * an aborted or fenced write left in a log). @default "read_committed"
   */
  readonly isolationLevel?: SourceIsolationLevel;
  /**
   * fetchBatches gives every batch in this codec, compressed again where it came in another, its
   * contentCrc over its records uncompressed (codec/pass-through.ts): target.copy "batches" with
   * target.compression, on both sides, so a copy matches its source. @default each batch's own
   */
  readonly batchCodec?: CompressionCodec | undefined;
  /**
   * Where fetchBatches checks a batch's CRC (codec/pass-through.ts): "write" leaves a batch that
   * passes as it came to the target's broker, for the worker's reads, which write every such
   * batch or compute its contentCrc (contentCrc checks it); nothing else may read with it.
   * @default "scan"
   */
  readonly batchCrc?: CrcCheck;
}

export type SourceIsolationLevel = "read_committed" | "read_uncommitted";

export class KafkaPartitionReader implements SourceReader {
  readonly #client: KafkaClusterClient;
  /** The long polls' connections (fetch-coalescer.ts): nothing else queues behind them. */
  readonly #pollClient: KafkaClusterClient;
  readonly #coalescer: FetchCoalescer;
  readonly #logger: Logger | undefined;
  readonly #readCommitted: boolean;
  readonly #batchCodec: CompressionCodec | undefined;
  readonly #batchCrc: CrcCheck;
  #closed = false;

  constructor(options: KafkaPartitionReaderOptions) {
    this.#client = new KafkaClusterClient(options);
    this.#readCommitted = (options.isolationLevel ?? "read_committed") === "read_committed";
    this.#pollClient = new KafkaClusterClient(options);
    const { requestTimeoutMs } = this.#client;
    this.#coalescer = new FetchCoalescer(
      {
        data: brokerFetchSender(this.#client, requestTimeoutMs),
        poll: brokerFetchSender(this.#pollClient, requestTimeoutMs),
      },
      this.#readCommitted ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED,
    );
    this.#logger = options.logger;
    this.#batchCodec = options.batchCodec;
    this.#batchCrc = options.batchCrc ?? "scan";
  }

  /**
   * One fetch, then follow-ups while the log holds more than was returned and the limits have
   * room. A broker may answer with less than is there: librdkafka's mock sends one record batch
   * per partition per request, and a real broker stops early near its own size limits. Each
   * record the caller gets per call saves it a produce request and a checkpoint per call, which
   * is what bounds the copy rate. Follow-ups ask not to wait (maxWaitMs 0), stop after
   * FILL_BUDGET_MS so a slow trickle of small batches does not hold back what is already read,
   * and a follow-up that fails just ends the call: the caller's next fetch meets the error.
   * As with Kafka's own fetch, the last batch taken may carry the total past maxBytes.
   */
  async fetch(tp: TopicPartition, offset: number, limits: FetchLimits): Promise<FetchedRecords> {
    const filled = await this.#fill(tp, offset, limits, this.#recordsOf);
    return { records: filled.units, ...progressOf(filled), bytes: filled.bytes };
  }

  /**
   * As fetch, in source batches (codec/pass-through.ts), with the same follow-ups; a batch is
   * never split, and the limits stop before a batch that would pass them, except the first.
   */
  async fetchBatches(tp: TopicPartition, offset: number, limits: FetchLimits): Promise<FetchedBatches> {
    const filled = await this.#fill(tp, offset, limits, this.#batchesOf);
    return { batches: filled.units, ...progressOf(filled), bytes: filled.bytes };
  }

  /**
   * Left null for a batch passing as it came that a reader with a batchCodec would have to
   * decompress for it, or whose CRC a reader with batchCrc "write" left unchecked: computed here,
   * the CRC checked first. Asked before the batch is written, while its bytes are still its
   * answer's (answer-pool.ts).
   */
  async contentCrc(batch: SourceBatch): Promise<number> {
    return batch.contentCrc ?? contentCrcOnDemand(batch.bytes, this.#batchCodec);
  }

  /** fetch's and fetchBatches' one loop: the first fetch, then the follow-ups (see fetch). */
  async #fill<U>(
    tp: TopicPartition,
    offset: number,
    limits: FetchLimits,
    shape: Shape<U>,
  ): Promise<Filled<U>> {
    const first = await this.#onLeader(
      tp,
      `fetch ${tp.topic}/${tp.partition}@${offset}`,
      { offset },
      (route) => this.#fetchOnce(route, tp, offset, { ...limits, first: true }, shape),
    );
    if (!hasRoom(first, first.records, first.bytes, limits)) return first;
    const { units } = first;
    const epochs = [...first.epochs];
    let records = first.records;
    let bytes = first.bytes;
    let last = first;
    const { clock } = this.#client;
    const stopAt = clock.now() + FILL_BUDGET_MS;
    while (clock.now() < stopAt && !this.#closed) {
      let next: Filled<U>;
      try {
        next = await this.#fetchOnce(
          await this.#client.route(tp),
          tp,
          last.nextOffset,
          {
            maxRecords: limits.maxRecords - records,
            maxBytes: limits.maxBytes - bytes,
            maxWaitMs: 0,
            first: units.length === 0,
          },
          shape,
        );
      } catch {
        break;
      }
      if (next.nextOffset <= last.nextOffset) break;
      for (const unit of next.units) units.push(unit);
      for (const start of next.epochs) if (epochs.at(-1)?.epoch !== start.epoch) epochs.push(start);
      records += next.records;
      bytes += next.bytes;
      last = next;
      if (!hasRoom(last, records, bytes, limits)) break;
    }
    return { ...last, units, records, bytes, epochs };
  }

  /**
   * Topic id and leader epoch from Metadata v10+ (kafkajs's own Metadata is v6, which has
   * neither). A broker older than Kafka 2.8 answers with unknowns, which disables the checks
   * that need them rather than failing the partition.
   */
  describePartition(tp: TopicPartition): Promise<PartitionIdentity> {
    return this.#attempt(tp, `describe ${tp.topic}/${tp.partition}`, {}, async () => {
      const topic = await this.#client.describeTopic(tp);
      if (topic === null) return { topicId: null, leaderEpoch: -1 };
      const partition = topic.partitions.find((p) => p.partition === tp.partition);
      return { topicId: topic.topicId, leaderEpoch: partition?.leaderEpoch ?? -1 };
    });
  }

  /** OffsetForLeaderEpoch to the partition's leader; -1 when the broker cannot tell. */
  endOffsetForLeaderEpoch(tp: TopicPartition, leaderEpoch: number): Promise<number> {
    const what = `offset for leader epoch ${tp.topic}/${tp.partition}`;
    return this.#onLeader(tp, what, {}, async (route) => {
      const broker = await this.#client.broker(route.leader);
      const apiKey = OFFSET_FOR_LEADER_EPOCH_API_KEY;
      if (this.#client.supported(broker, apiKey, OFFSET_FOR_LEADER_EPOCH_VERSIONS) === undefined) return -1;
      const api = { apiName: "OffsetForLeaderEpoch", apiKey, versions: OFFSET_FOR_LEADER_EPOCH_VERSIONS };
      const answer = await this.#client.request(broker, api, (v) =>
        offsetForLeaderEpochRequest(v, { ...tp, currentLeaderEpoch: route.leaderEpoch, leaderEpoch }),
      );
      if (answer === null) throw new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      if (answer.errorCode !== KafkaErrorCode.NONE) throw new KafkaPartitionError(answer.errorCode);
      return answer.endOffset;
    });
  }

  /** `call` routed to the partition's current leader and epoch (see `attempt`). */
  #onLeader<T>(
    tp: TopicPartition,
    what: string,
    extra: Record<string, unknown>,
    call: (route: PartitionRoute) => Promise<T>,
  ): Promise<T> {
    return this.#attempt(tp, what, extra, async () => call(await this.#client.route(tp)));
  }

  /** One attempt of `call` (re-routed once by the cluster client), its failure translated. */
  async #attempt<T>(
    tp: TopicPartition,
    what: string,
    extra: Record<string, unknown>,
    call: () => Promise<T>,
  ): Promise<T> {
    const details = { topic: tp.topic, partition: tp.partition, ...extra };
    if (this.#closed) throw new ReplicatorError("KAFKA_FATAL", "source reader is closed", { details });
    try {
      return await this.#client.attempt(what, call);
    } catch (error) {
      throw translateKafkajsError(error, what, details);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#coalescer.close();
    await Promise.all([this.#client.disconnect(), this.#pollClient.disconnect()]);
  }

  async #fetchOnce<U>(
    route: PartitionRoute,
    tp: TopicPartition,
    offset: number,
    limits: FetchLimits & Pick<SliceRoom, "first">,
    shape: Shape<U>,
  ): Promise<Filled<U>> {
    const response = await this.#coalescer.fetch(route, tp, offset, limits);
    if (response.errorCode === KafkaErrorCode.OFFSET_OUT_OF_RANGE)
      throw await this.#outOfRange(tp, offset, response);
    if (response.errorCode !== KafkaErrorCode.NONE) throw new KafkaPartitionError(response.errorCode);
    const slice = await shape(response, offset, limits);
    return {
      ...slice,
      // READ_COMMITTED stops at the last stable offset: that is the end this reader can reach.
      highWatermark: readableEnd(response, this.#readCommitted),
      logStartOffset: response.logStartOffset,
    };
  }

  /** A response as records: every batch decoded, aborted transactions dropped. */
  readonly #recordsOf: Shape<MirrorRecord> = async (response, offset, room) => {
    const all = await decodeRecordBatches(response.records);
    const visible = this.#readCommitted ? dropAborted(all, response.abortedTransactions) : all;
    const slice = slicePartition(all, visible, offset, room.maxRecords);
    const { records: units, nextOffset, bytes, epochs } = slice;
    return { units, records: units.length, nextOffset, bytes, epochs };
  };

  /** A response as source batches: headers scanned, aborted transactions told by header alone. */
  readonly #batchesOf: Shape<SourceBatch> = async (response, offset, room) => {
    const all = await scanRecordSet(response.records, this.#batchCrc);
    const aborted = abortedBatches(all, this.#readCommitted ? response.abortedTransactions : []);
    const slice = await sliceBatches(all, aborted, offset, room, this.#batchCodec);
    // Of the answer only these batches' bytes are read from here on, until they are written.
    answerPool.adopt(response.records, slice.units);
    return slice;
  };

  async #outOfRange(tp: TopicPartition, offset: number, response: FetchPartitionResponse) {
    let logStartOffset = response.logStartOffset;
    let highWatermark = response.highWatermark;
    if (logStartOffset < 0 || highWatermark < 0) {
      // Brokers often send -1 with this error; the core needs the range to know what was lost.
      try {
        const [offsets] = await listPartitionOffsets(this.#client, tp.topic, [tp.partition]);
        if (offsets !== undefined) ({ logStartOffset, logEndOffset: highWatermark } = offsets);
      } catch (error) {
        this.#logger?.warn("could not list offsets after OFFSET_OUT_OF_RANGE", {
          ...tp,
          ...describeError(error),
        });
      }
    }
    return new ReplicatorError(
      "OFFSET_OUT_OF_RANGE",
      `offset ${offset} is outside ${tp.topic}/${tp.partition} [${logStartOffset}, ${highWatermark})`,
      { details: { topic: tp.topic, partition: tp.partition, offset, logStartOffset, highWatermark } },
    );
  }
}

/** Time a fetch may spend on follow-up requests after the first answer. */
const FILL_BUDGET_MS = 100;

/** How one response becomes a fetch's units: records, or source batches. */
type Shape<U> = (response: FetchPartitionResponse, offset: number, room: SliceRoom) => Promise<Slice<U>>;

/** What #fill and #fetchOnce give: a slice, with where the partition stands. */
interface Filled<U> extends Slice<U> {
  readonly highWatermark: number;
  readonly logStartOffset: number;
}

function progressOf(filled: Filled<unknown>): FetchProgress {
  const { nextOffset, highWatermark, logStartOffset, epochs } = filled;
  return { nextOffset, highWatermark, logStartOffset, epochs };
}

/** The log holds more than this fetch reached, and the limits allow more. */
function hasRoom(last: FetchProgress, records: number, bytes: number, limits: FetchLimits): boolean {
  return last.nextOffset < last.highWatermark && records < limits.maxRecords && bytes < limits.maxBytes;
}
