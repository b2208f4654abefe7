/**
 * What the pump copies, whichever target.copy mode: records (decoded, written with provenance) or
 * source batches (passed through). The copy loop handles both through these few questions, so
 * each rule of the loop (epochs, cuts, what landed) is written once.
 */
import {
  type CopyUnits,
  type FetchedBatches,
  type FetchedRecords,
  type FetchProgress,
  isBatch,
  isBatches,
  type MirrorRecord,
  type SourceBatch,
  type TopicPartition,
} from "../model.js";
import type { ReplicationMetrics } from "../ports.js";

/** One fetch, as the pump sees it in either mode. */
export interface FetchedUnits extends FetchProgress {
  readonly units: CopyUnits;
  /** FetchedRecords.bytes or FetchedBatches.bytes. */
  readonly bytes: number;
}

export function unitsOfRecords(fetched: FetchedRecords): FetchedUnits {
  return { ...fetched, units: fetched.records };
}

export function unitsOfBatches(fetched: FetchedBatches): FetchedUnits {
  return { ...fetched, units: fetched.batches };
}

type Unit = MirrorRecord | SourceBatch;

/**
 * Whether `b` is the fetch right after `a` and both say where their leader epochs begin, so they
 * can be written as one (mergeFetched): the pump cuts a write where the epoch changes.
 */
export function canMerge(a: FetchedUnits, b: FetchedUnits): boolean {
  const first = b.epochs?.[0];
  return a.epochs?.at(-1) !== undefined && first !== undefined && first.offset === a.nextOffset;
}

/** `a` and then `b` as one fetch (canMerge): what a write takes when `b` was read ahead already. */
export function mergeFetched(a: FetchedUnits, b: FetchedUnits): FetchedUnits {
  const last = a.epochs?.at(-1);
  const first = b.epochs?.[0];
  if (last === undefined || first === undefined || !canMerge(a, b))
    throw new RangeError(`fetch from ${first?.offset} does not continue the one ending at ${a.nextOffset}`);
  const epochs = b.epochs ?? [];
  return {
    ...b,
    units: [...(a.units as readonly Unit[]), ...(b.units as readonly Unit[])] as CopyUnits,
    bytes: a.bytes + b.bytes,
    // b's first entry continues a's last epoch, or a new one begins where a ended.
    epochs: [...(a.epochs ?? []), ...(first.epoch === last.epoch ? epochs.slice(1) : epochs)],
  };
}

/** The source offset of the unit's first record. */
export function firstOffset(unit: Unit): number {
  return isBatch(unit) ? unit.baseOffset : unit.offset;
}

/** The source offset of the unit's last record. */
export function lastOffset(unit: Unit): number {
  return isBatch(unit) ? unit.lastOffset : unit.offset;
}

/** Records in `units`. */
export function recordCount(units: CopyUnits): number {
  if (!isBatches(units)) return units.length;
  let n = 0;
  for (const batch of units) n += batch.count;
  return n;
}

/** The largest record timestamp in `units`; -1 when none has one. */
export function newestTimestamp(units: CopyUnits): number {
  let newest = -1;
  for (const unit of units as readonly Unit[])
    newest = Math.max(newest, isBatch(unit) ? unit.maxTimestamp : unit.timestamp);
  return newest;
}

/** `units.slice(start, end)`, of the same kind. */
export function sliceUnits(units: CopyUnits, start: number, end?: number): CopyUnits {
  return units.slice(start, end) as CopyUnits;
}

/** The units whose last record is after `offset`, of the same kind. */
export function unitsAfter(units: CopyUnits, offset: number): CopyUnits {
  const list = units as readonly Unit[];
  return list.every((u) => lastOffset(u) > offset)
    ? units
    : (list.filter((u) => lastOffset(u) > offset) as CopyUnits);
}

/**
 * How many leading units `records` acknowledged records make up. The writer acknowledges whole
 * units only (a source batch is one produce batch), so anything else is a broken contract.
 */
export function unitsCovering(units: CopyUnits, records: number): number {
  if (!isBatches(units)) return records;
  let n = 0;
  let covered = 0;
  while (covered < records) {
    const unit = units[n];
    if (unit === undefined) break;
    covered += unit.count;
    n++;
  }
  if (covered !== records) throw new RangeError(`${records} acknowledged records end inside a source batch`);
  return n;
}

/** Reports one fetch copied (ReplicationMetrics.batchCopied); returns its records. */
export function reportCopied(
  metrics: ReplicationMetrics,
  source: TopicPartition,
  fetched: FetchedUnits,
  fetchedAt: number,
): number {
  const records = recordCount(fetched.units);
  const newest = newestTimestamp(fetched.units);
  metrics.batchCopied({
    ...source,
    records,
    bytes: fetched.bytes,
    nextOffset: fetched.nextOffset,
    highWatermark: fetched.highWatermark,
    ...(newest >= 0 ? { newestTimestamp: newest } : {}),
    fetchedAt,
  });
  return records;
}
