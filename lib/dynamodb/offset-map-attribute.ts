/**
 * How a lease's offset map (lib/core/lease/offset-map.ts) is stored: one string attribute of
 * "source:target" pairs, oldest first, separated by spaces ("0:0 5000:5013 9000:9021"). A string
 * keeps the item small and the update builder plain; read back strictly like every attribute.
 * A leading "^" marks the first point as the map's origin (OffsetMapPoint.origin).
 */
import type { OffsetMapPoint } from "../core/ports.js";

export function encodeOffsetMap(map: readonly OffsetMapPoint[]): string {
  return map.map((p) => `${p.origin === true ? "^" : ""}${p.source}:${p.target}`).join(" ");
}

const PAIR = /^(\^?)(\d{1,16}):(\d{1,16})$/;

/** Null (absent) is an empty map; anything malformed or out of order is `invalid(problem)`. */
export function parseOffsetMap(value: string | null, invalid: (problem: string) => Error): OffsetMapPoint[] {
  if (value === null) return [];
  const problem =
    'must be "source:target" pairs of safe integers, separated by spaces, sources ascending, "^" only before the first';
  const out: OffsetMapPoint[] = [];
  for (const pair of value.split(" ")) {
    const match = PAIR.exec(pair);
    const origin = match?.[1] === "^";
    const source = Number(match?.[2]);
    const target = Number(match?.[3]);
    if (match === null || !Number.isSafeInteger(source) || !Number.isSafeInteger(target))
      throw invalid(problem);
    const last = out[out.length - 1];
    if ((last !== undefined && source <= last.source) || (origin && last !== undefined))
      throw invalid(problem);
    out.push(origin ? { source, target, origin } : { source, target });
  }
  return out;
}
