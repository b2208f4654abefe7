/**
 * Exact translation for target.copy "batches", whose copies carry no provenance header.
 *
 * What stands in for it is the offset map's invariant in this mode (target-tail.ts): past a point
 * (C, T) the copies of ours in the target are copies of the source batches from C on, one to one
 * and in order, a copy of n records taking n consecutive target offsets. So the translation walks
 * both in lockstep from the nearest point at or below O: the SOURCE's batches from C
 * (fetchBatches) and our copies from T (READ_COMMITTED, another producer's batches skipped), each
 * copy checked against its source batch by record count and content CRC. When O falls in or
 * before source batch k, the answer is where copy k begins plus the records of batch k below O:
 * none when O is at or before its first record; O less its base offset in a batch without gaps
 * (one passed as it came); for a batch the reader encoded again with compaction gaps, counted by
 * reading its records (SourceReader.fetch). When the copies run out first (the group is ahead of
 * the mirror) the answer is right after the last copy, provisional as in records mode
 * (translate.ts); when there is none past the point, it steps back one point at a time to find
 * the last copy. A copy that is not its source batch fails the translation with
 * TARGET_COPY_MISMATCH naming both offsets: the source changed under the copy (compaction or
 * retention since, a re-created topic), and any answer would be a guess.
 *
 * Which copies are ours. One transactional id writes each source partition's copies, so one
 * producer id (a new one only when its epoch is exhausted or the id expired unused). Given it
 * (TranslationRequest.producerId), every batch of that producer past the point must be the next
 * source batch, and one that is not is a mismatch: sound, but only if it is the id that wrote the
 * copies past the point, which only an id kept with the point says; the writer's current id may
 * have changed since, and asking for it (InitProducerId) would fence the running mirror. Not
 * given, it is learnt: the first batch past the point that has a producer id and is the first
 * source batch is our copy of it (by the invariant our first copy past the point is of that
 * batch), and its producer is ours from there on, checked as above. What that cannot tell is a
 * first copy that no longer matches its source batch: it and the copies after it read as another
 * producer's, so the translation steps back, and the producer the step back learns is then seen
 * to have batches past the point: the mismatch. Past the oldest point nothing can tell it, and
 * the answer is that point's target offset: nothing of ours is skipped, copies past it are read
 * again. Another producer writing batches equal to ours from the same point on (a second mirror
 * of the same partition into the same target) cannot be told from ours by either way.
 *
 * Retention below the point, on the target (copies gone) or the source (batches gone), leaves
 * nothing to count from: OFFSETS_UNTRANSLATABLE, as for an offset below the map. A step back
 * stopped by it answers the oldest point it could read from, as records mode does.
 */

import { withContentCrcs } from "../core/content-crc.js";
import { nearestPoint } from "../core/lease/offset-map.js";
import type { FetchedBatches, FetchLimits, SourceBatch } from "../core/model.js";
import type { OffsetMapPoint } from "../core/ports.js";
import { targetBounds } from "../core/pump/target-read.js";
import { isReplicatorError, ReplicatorError } from "../errors.js";
import type { BatchesTranslateDeps, Translation, TranslationRequest } from "./model.js";
import { fetchTargetTowards, untranslatable } from "./target-fetch.js";

/** Source reads go through every batch, and none waits for new data. */
const SOURCE_SCAN_LIMITS: FetchLimits = { maxRecords: 10_000, maxBytes: 4 * 1024 * 1024, maxWaitMs: 0 };

/** Where a copy of ours ends, and where its source batch does: "right after the last copy". */
interface LastCopy {
  readonly target: number;
  readonly source: number;
}

/** A batch of a producer other than ours, seen past a point before ours was learnt. */
interface OtherBatch {
  readonly targetOffset: number;
  /** The source offset of the point it lies past. */
  readonly pointSource: number;
}

/** What a walk of one stretch found. */
interface Walk {
  /** The answer, when O falls in or before a source batch whose copy lies in the stretch. */
  readonly found: Omit<Translation, "scanned"> | null;
  readonly last: LastCopy | null;
  /** Ours: given, or learnt in this stretch; null when it held no copy. */
  readonly producerId: bigint | null;
  /** Without a given id: the first batch of each other producer read before ours was learnt. */
  readonly others: ReadonlyMap<bigint, OtherBatch>;
  /** Target records read. */
  readonly scanned: number;
}

/** See the file comment. Throws OFFSETS_UNTRANSLATABLE, TARGET_COPY_MISMATCH, TARGET_TRANSACTION_OPEN. */
export async function translateBatches(
  deps: BatchesTranslateDeps,
  request: TranslationRequest,
): Promise<Translation> {
  const near = nearestPoint(request.map, request.sourceOffset);
  if (near === null) throw untranslatable(request);
  const bounds = await targetBounds(deps.admin, request.target);
  if (near.point.target < bounds.logStartOffset)
    throw targetRetained(request, near.point, bounds.logStartOffset);
  const forward = await walk(deps, request, near.point, bounds.logEndOffset, request.sourceOffset);
  if (forward.found !== null) return { ...forward.found, scanned: forward.scanned };
  if (forward.last !== null) return afterLast(forward.last, forward.scanned);
  // No copy of ours from the nearest point on: the last one, if any, lies before it.
  let end = near.point.target;
  let scanned = forward.scanned;
  const others = new Map(forward.others);
  for (let i = near.index - 1; i >= 0 && end > bounds.logStartOffset; i--) {
    const point = request.map[i];
    if (point === undefined || point.target >= end) continue;
    if (point.target < bounds.logStartOffset) break;
    const back = await walkBack(deps, request, point, end);
    if (back === null) break;
    scanned += back.scanned;
    const later = back.producerId === null ? undefined : others.get(back.producerId);
    if (later !== undefined) throw notFirstCopy(request, later);
    if (back.last !== null) return afterLast(back.last, scanned);
    for (const [id, other] of back.others) others.set(id, other);
    end = point.target;
  }
  // Nothing of ours since the oldest point read (or retention took it): read from there.
  return { targetOffset: end, nextSourceOffset: null, copiedTo: null, scanned };
}

function afterLast(last: LastCopy, scanned: number): Translation {
  return { targetOffset: last.target, nextSourceOffset: null, copiedTo: last.source, scanned };
}

/** A stretch behind the nearest point, walked for its last copy; null when retention took what it needs. */
async function walkBack(
  deps: BatchesTranslateDeps,
  request: TranslationRequest,
  point: OffsetMapPoint,
  end: number,
): Promise<Walk | null> {
  try {
    return await walk(deps, request, point, end, Number.POSITIVE_INFINITY);
  } catch (error) {
    if (isReplicatorError(error, "OFFSETS_UNTRANSLATABLE")) return null;
    throw error;
  }
}

/**
 * Our copies in the target from `point.target` up to `to`, matched one to one with the source's
 * batches from `point.source`, until the copy of the batch that holds or follows `wanted`.
 */
async function walk(
  deps: BatchesTranslateDeps,
  request: TranslationRequest,
  point: OffsetMapPoint,
  to: number,
  wanted: number,
): Promise<Walk> {
  const sources = new BatchCursor(
    (o) => readSource(deps, request, o),
    point.source,
    Number.POSITIVE_INFINITY,
  );
  const copies = new BatchCursor((o) => readTarget(deps, request, o, to), point.target, to);
  let ours = request.producerId ?? null;
  let last: LastCopy | null = null;
  const others = new Map<bigint, OtherBatch>();
  let scanned = 0;
  for (let copy = await copies.peek(); copy !== undefined; copies.advance(), copy = await copies.peek()) {
    scanned += copy.count;
    if (copy.producerId !== ours) {
      if (ours !== null || !isCopyOf(copy, await sources.peek())) {
        if (ours === null && copy.producerId >= 0n && !others.has(copy.producerId))
          others.set(copy.producerId, { targetOffset: copy.baseOffset, pointSource: point.source });
        continue;
      }
      const earlier = others.get(copy.producerId);
      if (earlier !== undefined) throw notFirstCopy(request, earlier);
      ours = copy.producerId;
    }
    const batch = await sources.peek();
    if (batch === undefined || !isCopyOf(copy, batch)) throw mismatch(request, copy, batch, sources.position);
    if (batch.lastOffset >= wanted) {
      const found = await answerIn(deps, request, copy, batch);
      return { found, last, producerId: ours, others, scanned };
    }
    last = { target: copy.lastOffset + 1, source: batch.lastOffset + 1 };
    sources.advance();
  }
  return { found: null, last, producerId: ours, others, scanned };
}

/** Same records (count and content CRC, which leaves out what a copy rewrites); a copy needs a producer. */
function isCopyOf(copy: SourceBatch, batch: SourceBatch | undefined): boolean {
  return (
    batch !== undefined &&
    copy.producerId >= 0n &&
    copy.count === batch.count &&
    copy.contentCrc !== null &&
    copy.contentCrc === batch.contentCrc
  );
}

/** The answer inside copy `copy` of `batch`, the first source batch that holds or follows O. */
async function answerIn(
  deps: BatchesTranslateDeps,
  request: TranslationRequest,
  copy: SourceBatch,
  batch: SourceBatch,
): Promise<Omit<Translation, "scanned">> {
  const wanted = request.sourceOffset;
  const copiedTo = batch.lastOffset + 1;
  if (wanted <= batch.baseOffset)
    return { targetOffset: copy.baseOffset, nextSourceOffset: batch.baseOffset, copiedTo };
  if (batch.count === batch.lastOffset - batch.baseOffset + 1)
    return {
      targetOffset: copy.baseOffset + (wanted - batch.baseOffset),
      nextSourceOffset: wanted,
      copiedTo,
    };
  // Encoded again with compaction gaps: only its records say which offsets it holds.
  let below = 0;
  let offset = batch.baseOffset;
  while (offset <= batch.lastOffset) {
    const limits = { ...SOURCE_SCAN_LIMITS, maxRecords: batch.count };
    const fetched = await deps.source.fetch(request.source, offset, limits);
    if (fetched.nextOffset <= offset) break;
    for (const record of fetched.records) {
      if (record.offset > batch.lastOffset || below >= batch.count) break;
      if (record.offset >= wanted)
        return { targetOffset: copy.baseOffset + below, nextSourceOffset: record.offset, copiedTo };
      below++;
    }
    offset = fetched.nextOffset;
  }
  throw mismatch(request, copy, batch, offset);
}

/** The source's batches from `offset`; OFFSETS_UNTRANSLATABLE when the log no longer holds it. */
async function readSource(
  deps: BatchesTranslateDeps,
  request: TranslationRequest,
  offset: number,
): Promise<FetchedBatches> {
  try {
    return await withContentCrcs(
      deps.source,
      await deps.source.fetchBatches(request.source, offset, SOURCE_SCAN_LIMITS),
    );
  } catch (error) {
    if (!isReplicatorError(error, "OFFSET_OUT_OF_RANGE")) throw error;
    const { topic, partition } = request.source;
    throw untranslatable(
      request,
      `source ${topic}/${partition} no longer holds offset ${offset} (retention, or the log was truncated), ` +
        "so its batches cannot be matched to the copies from there",
    );
  }
}

/** Our target's batches from `offset` towards `to`, waiting out an open transaction (target-fetch.ts). */
async function readTarget(
  deps: BatchesTranslateDeps,
  request: TranslationRequest,
  offset: number,
  to: number,
): Promise<FetchedBatches> {
  const { target } = request;
  const read = (o: number, limits: FetchLimits) => deps.reader.fetchBatches(target, o, limits);
  const fetched = await fetchTargetTowards(deps, target, offset, to, read);
  if (fetched !== null) return withContentCrcs(deps.reader, fetched);
  throw untranslatable(
    request,
    `target ${target.topic}/${target.partition} no longer holds offset ${offset} (retention while it was read), ` +
      "so the copies cannot be counted from the map point",
  );
}

/** Batches read forward from one offset, a fetch at a time, up to an end. */
class BatchCursor {
  readonly #read: (offset: number) => Promise<FetchedBatches>;
  readonly #end: number;
  #batches: readonly SourceBatch[] = [];
  #head = 0;
  #offset: number;
  #ended = false;

  constructor(read: (offset: number) => Promise<FetchedBatches>, from: number, end: number) {
    this.#read = read;
    this.#offset = from;
    this.#end = end;
  }

  /** Where the next batch begins, or the offset the next read starts at. */
  get position(): number {
    return this.#batches[this.#head]?.baseOffset ?? this.#offset;
  }

  async peek(): Promise<SourceBatch | undefined> {
    while (this.#head >= this.#batches.length && !this.#ended) {
      if (this.#offset >= this.#end) {
        this.#ended = true;
        break;
      }
      const fetched = await this.#read(this.#offset);
      if (fetched.nextOffset <= this.#offset) this.#ended = true;
      // A batch that straddles the end is not ours (no copy of ours spans a map point's target):
      // the stretch after it reads it.
      this.#batches = fetched.batches.filter((b) => b.lastOffset < this.#end);
      this.#head = 0;
      this.#offset = Math.max(this.#offset, fetched.nextOffset);
    }
    return this.#batches[this.#head];
  }

  advance(): void {
    this.#head++;
  }
}

function mismatch(
  request: TranslationRequest,
  copy: SourceBatch,
  batch: SourceBatch | undefined,
  sourceAt: number,
): ReplicatorError {
  const { source, target, sourceOffset } = request;
  const what =
    batch === undefined
      ? `no source batch: ${source.topic}/${source.partition} ends at offset ${sourceAt}`
      : `not the source batch at ${source.topic}/${source.partition} offset ${batch.baseOffset} (${batch.count} records)`;
  return new ReplicatorError(
    "TARGET_COPY_MISMATCH",
    `target ${target.topic}/${target.partition} offset ${copy.baseOffset} holds a copy (${copy.count} records) that is ` +
      `${what}: the source changed under the copy (compaction or retention since, a re-created topic), ` +
      `so offset ${sourceOffset} cannot be translated exactly`,
    {
      details: {
        topic: source.topic,
        partition: source.partition,
        targetTopic: target.topic,
        targetPartition: target.partition,
        targetOffset: copy.baseOffset,
        sourceOffset: batch?.baseOffset ?? sourceAt,
        targetRecords: copy.count,
        sourceRecords: batch?.count ?? 0,
        groupOffset: sourceOffset,
      },
    },
  );
}

/** A batch of our producer past a point that is not the copy of the point's first source batch. */
function notFirstCopy(request: TranslationRequest, other: OtherBatch): ReplicatorError {
  const { source, target, sourceOffset } = request;
  return new ReplicatorError(
    "TARGET_COPY_MISMATCH",
    `target ${target.topic}/${target.partition} offset ${other.targetOffset} holds a batch of the mirror's producer ` +
      `that is not the copy of the source batch at ${source.topic}/${source.partition} offset ${other.pointSource}: ` +
      `the source changed under the copy, so offset ${sourceOffset} cannot be translated exactly`,
    {
      details: {
        topic: source.topic,
        partition: source.partition,
        targetTopic: target.topic,
        targetPartition: target.partition,
        targetOffset: other.targetOffset,
        sourceOffset: other.pointSource,
        groupOffset: sourceOffset,
      },
    },
  );
}

function targetRetained(
  request: TranslationRequest,
  point: OffsetMapPoint,
  logStart: number,
): ReplicatorError {
  const { topic, partition } = request.target;
  return untranslatable(
    request,
    `target ${topic}/${partition} starts at offset ${logStart} (retention), past offset ${point.target} ` +
      "from which the copies must be counted",
  );
}
