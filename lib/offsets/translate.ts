/**
 * Exact translation of a consumer group's committed source offset into the target partition.
 *
 * For a committed offset O of source partition p (the next record the group would read), the
 * translation is the target offset of the first record copied from p with source offset >= O;
 * when nothing at or after O has been copied yet, the position right after the last record
 * copied from p. Copies are recognised by their provenance header (this alias, partition p), so
 * the answer is exact whatever else the target partition holds: other sources' records
 * interleaved (many sites into one central topic), transaction markers, aborted copies (read
 * READ_COMMITTED, they are never returned; a read_committed consumer skips them too), source
 * offsets that were never copied (compaction gaps, transaction markers, records cut as loops).
 *
 * And whatever transaction another writer of the target partition holds open: a READ_COMMITTED
 * read stops at its first offset (the LSO), and copies of ours beyond it are copies all the same
 * (a consumer reads them once it ends). So each stretch is read up to an end fixed before it
 * starts (target-read.ts), the high watermark listed first; while the LSO is below that end the
 * read waits, retrying from where it got to until the caller's deadline (`retry`), and then fails
 * with TARGET_TRANSACTION_OPEN rather than answer as if nothing past the LSO were copied. It does
 * not wait when the copy it looks for lies before the LSO.
 *
 * The target is read from the lease's offset map (lib/core/lease/offset-map.ts): from the nearest point at or
 * below O, never from the partition's start. Only when that stretch holds no copy of p at all
 * (the group is caught up or ahead, and our last copy lies before the point) does it step back
 * one point at a time to find the last copy, each step a stretch between two map points.
 *
 * A translation of the second kind is provisional while the mirror still copies: records it
 * copies later land after the position, so a group that was ahead of the mirror (it consumed
 * records not yet copied) would read those again. The sync re-translates every minute, and
 * `failover` translates once more when the mirror has stopped.
 *
 * That is target.copy "records". Copies of target.copy "batches" carry no provenance header:
 * translate-batches.ts gives the same answers by walking the source's batches and our copies
 * of them in lockstep from the same nearest point (TranslateDeps.copy picks the mode).
 */

import { nearestPoint } from "../core/lease/offset-map.js";
import type { MirrorRecord } from "../core/model.js";
import { lastProvenance } from "../core/provenance.js";
import { targetBounds } from "../core/pump/target-read.js";
import type { RecordsTranslateDeps, TranslateDeps, Translation, TranslationRequest } from "./model.js";
import { fetchTargetTowards, untranslatable } from "./target-fetch.js";
import { translateBatches } from "./translate-batches.js";

export type {
  BatchesTranslateDeps,
  RecordsTranslateDeps,
  TranslateDeps,
  Translation,
  TranslationRequest,
} from "./model.js";

/** What one stretch of the target held of ours. */
interface Stretch {
  /** The first copy with source offset >= the wanted one (forward scans only). */
  readonly found: { readonly target: number; readonly source: number } | null;
  /** The last copy of ours read. */
  readonly last: { readonly target: number; readonly source: number } | null;
  readonly scanned: number;
}

/**
 * Throws OFFSETS_UNTRANSLATABLE when the map has no point to start from: empty (never
 * checkpointed exactly-once), or O below a first point that is not the origin.
 */
export async function translateOffset(
  deps: TranslateDeps,
  request: TranslationRequest,
): Promise<Translation> {
  if (deps.copy === "batches") return translateBatches(deps, request);
  return translateRecords(deps, request);
}

async function translateRecords(
  deps: RecordsTranslateDeps,
  request: TranslationRequest,
): Promise<Translation> {
  const { map, sourceOffset, target } = request;
  const near = nearestPoint(map, sourceOffset);
  if (near === null) throw untranslatable(request);
  const bounds = await targetBounds(deps.admin, target);
  const from = Math.max(near.point.target, bounds.logStartOffset);
  const forward = await scanStretch(deps, request, from, bounds.logEndOffset, sourceOffset);
  let scanned = forward.scanned;
  if (forward.found !== null) {
    const copiedTo = Math.max(forward.found.source, forward.last?.source ?? -1) + 1;
    return { targetOffset: forward.found.target, nextSourceOffset: forward.found.source, copiedTo, scanned };
  }
  if (forward.last !== null) {
    return {
      targetOffset: forward.last.target + 1,
      nextSourceOffset: null,
      copiedTo: forward.last.source + 1,
      scanned,
    };
  }
  // No copy of ours from the nearest point on: the last one, if any, lies before it.
  let end = from;
  for (let i = near.index - 1; i >= 0 && end > bounds.logStartOffset; i--) {
    const start = Math.max(map[i]?.target ?? 0, bounds.logStartOffset);
    if (start >= end) continue;
    const back = await scanStretch(deps, request, start, end, Number.POSITIVE_INFINITY);
    scanned += back.scanned;
    if (back.last !== null) {
      return {
        targetOffset: back.last.target + 1,
        nextSourceOffset: null,
        copiedTo: back.last.source + 1,
        scanned,
      };
    }
    end = start;
  }
  // Nothing of ours since the oldest point (or retention took it): read from there.
  return { targetOffset: end, nextSourceOffset: null, copiedTo: null, scanned };
}

/**
 * Reads [from, to) of the target, READ_COMMITTED, noting copies of the request's partition;
 * stops at the first one with source offset >= `wanted`, or where the log no longer holds the
 * stretch (target retention). Waits while an open transaction keeps the LSO inside the stretch.
 */
async function scanStretch(
  deps: RecordsTranslateDeps,
  request: TranslationRequest,
  from: number,
  to: number,
  wanted: number,
): Promise<Stretch> {
  let last: Stretch["last"] = null;
  let scanned = 0;
  let offset = from;
  while (offset < to) {
    const fetched = await fetchTargetTowards(deps, request.target, offset, to, (o, limits) =>
      deps.reader.fetch(request.target, o, limits),
    );
    if (fetched === null) break;
    for (const record of fetched.records) {
      if (record.offset >= to) return { found: null, last, scanned };
      scanned++;
      const source = ourSourceOffset(deps, request, record);
      if (source === null) continue;
      if (source >= wanted) return { found: { target: record.offset, source }, last, scanned };
      last = { target: record.offset, source };
    }
    offset = fetched.nextOffset;
  }
  return { found: null, last, scanned };
}

function ourSourceOffset(
  deps: RecordsTranslateDeps,
  request: TranslationRequest,
  record: MirrorRecord,
): number | null {
  const p = lastProvenance(record, deps.header);
  if (p === null || p.alias !== deps.sourceAlias || p.partition !== request.source.partition) return null;
  return p.offset;
}
