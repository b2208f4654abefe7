/**
 * The compact source-to-target offset map a lease keeps for consumer-group offset translation.
 *
 * Every exactly-once checkpoint C is stored with a target position T such that every record
 * copied from source offset C onwards sits at or after T (model.ts, Lease.targetOffset). Such a
 * pair stays true for ever (later copies land later), so any set of past pairs is a valid map,
 * and translating a source offset O needs to read the target only from the T of the nearest
 * point with C <= O. The lease keeps at most OFFSET_MAP_MAX_POINTS of them: recent points dense
 * (a group that keeps up scans a few records), older ones sparser (a group lagging by L records
 * scans a stretch in proportion to L), the oldest always kept (it bounds every scan from below).
 *
 * The map is a hint, never a decision: a point lost to a stale write or a thinning only makes a
 * scan longer, never a translation wrong. A checkpoint reset (the source log diverged) clears
 * it, since its source offsets named records of a log that is gone.
 */
import type { OffsetMapPoint } from "./model.js";

export type { OffsetMapPoint } from "./model.js";

/** Points a lease keeps; 32 pairs cost some 400 bytes of the item. */
export const OFFSET_MAP_MAX_POINTS = 32;

/**
 * The map with `point` added as its newest point, thinned to `max` points. A point whose source
 * offset is not past the newest one's replaces it when it is the same offset (the larger target
 * is a tighter start, both are valid) and is ignored when it is older (it would not be newest).
 */
export function withPoint(
  map: readonly OffsetMapPoint[],
  point: OffsetMapPoint,
  max: number = OFFSET_MAP_MAX_POINTS,
): OffsetMapPoint[] {
  const out = [...map];
  const last = out[out.length - 1];
  if (last !== undefined && point.source < last.source) return out;
  if (last !== undefined && point.source === last.source) {
    const target = Math.max(last.target, point.target);
    // The origin's target stays: "nothing copied before it" holds for that offset only.
    out[out.length - 1] = last.origin === true ? last : { source: point.source, target };
    return out;
  }
  out.push(
    out.length === 0 && point.origin === true
      ? { ...point, origin: true }
      : { source: point.source, target: point.target },
  );
  while (out.length > Math.max(2, max)) out.splice(thinnest(out), 1);
  return out;
}

/**
 * The interior point whose removal costs least: the merged gap it leaves, relative to how far
 * behind the newest point it lies. Gaps so grow in proportion to their age (exponential
 * spacing). Never the first or the last point; ties go to the oldest.
 */
function thinnest(points: readonly OffsetMapPoint[]): number {
  const newest = points[points.length - 1]?.source ?? 0;
  let best = 1;
  let bestCost = Number.POSITIVE_INFINITY;
  for (let i = 1; i < points.length - 1; i++) {
    const before = points[i - 1];
    const after = points[i + 1];
    if (before === undefined || after === undefined) continue;
    const cost = (after.source - before.source) / (newest - before.source + 1);
    if (cost < bestCost) {
      bestCost = cost;
      best = i;
    }
  }
  return best;
}

/**
 * Where a scan for source offset `offset` may start: the point with the largest source offset
 * at or below it, else the oldest point when it is the origin (nothing was copied before it);
 * null when there is no such point. Also returns the index, so a caller can step back.
 */
export function nearestPoint(
  map: readonly OffsetMapPoint[],
  offset: number,
): { readonly point: OffsetMapPoint; readonly index: number } | null {
  let found: { point: OffsetMapPoint; index: number } | null = null;
  map.forEach((point, index) => {
    if (point.source <= offset && (found === null || point.source >= found.point.source)) {
      found = { point, index };
    }
  });
  if (found !== null) return found;
  const first = map[0];
  return first?.origin === true ? { point: first, index: 0 } : null;
}

/** The lease's map, with its current (checkpoint, targetOffset) pair as the newest point. */
export function leaseMap(lease: {
  readonly checkpoint: number | null;
  readonly targetOffset?: number | null;
  readonly offsetMap?: readonly OffsetMapPoint[];
}): OffsetMapPoint[] {
  const map = [...(lease.offsetMap ?? [])];
  const { checkpoint, targetOffset } = lease;
  if (checkpoint === null || targetOffset === undefined || targetOffset === null) return map;
  return withPoint(map, { source: checkpoint, target: targetOffset }, Number.POSITIVE_INFINITY);
}
