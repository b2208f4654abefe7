/**
 * The chaos run's verdict (scripts/chaos/run.ts): wait until every lease checkpoint reached its
 * source partition's end (MirrorMaker 2: until every source record has a copy, or the target
 * stopped growing), then compare each target partition with its source, record for record, and
 * name the first anomalies found. kafka-mirror's copies name their source offset in the
 * provenance header; MirrorMaker 2's carry nothing of the kind, so each is matched to its source
 * record by content (key, value, headers, timestamp: every source record of a partition differs,
 * its headers hold its sequence number).
 */
import { systemClock } from "../../lib/core/clock.js";
import type { MirrorRecord } from "../../lib/core/model.js";
import { DEFAULT_PROVENANCE_HEADER, lastProvenance } from "../../lib/core/provenance.js";
import { retryingAdmin } from "../../lib/core/retrying-ports.js";
import { DynamoDbLeaseStore } from "../../lib/dynamodb/lease-store.js";
import { KafkaClusterAdmin } from "../../lib/kafka/admin/cluster-admin.js";
import type { SourceIsolationLevel } from "../../lib/kafka/read/source-reader.js";
import type { DynamoDbLocal } from "../../test/helpers/dynamodb-local.js";
import { ClusterView, recordImage } from "../../test/helpers/partition-data.js";
import { sleep } from "./faults.js";

const HEADER = Buffer.from(DEFAULT_PROVENANCE_HEADER);
/** Anomalies named one by one in the result; the counters count all of them. */
const MAX_ANOMALIES = 20;

export interface Tally {
  records: number;
  lost: number;
  duplicated: number;
  out_of_order: number;
  altered: number;
  extra: number;
  /** The first anomalies, e.g. "CHAOS-1/3 offsets 1200-1699: copied more than once, at target offsets 1190+1702 .. 1689+2201". */
  anomalies: string[];
}

/** A cluster as the checks see it: mock or real. */
export interface Bootstrap {
  readonly bootstrapServers: string[];
}

/** How a target record is traced to its source record. */
export type Matching = "provenance" | "content";

export async function waitForCatchUp(
  src: Bootstrap,
  db: DynamoDbLocal,
  table: string,
  partitionsOf: { topics: readonly string[]; partitions: number; timeoutMs: number },
  log: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + partitionsOf.timeoutMs;
  // An admin call is one attempt; the brokers may still be recovering from the last fault.
  const admin = retryingAdmin(
    new KafkaClusterAdmin({ brokers: src.bootstrapServers, clientId: "chaos-check" }),
    {
      clock: systemClock,
      deadline,
    },
  );
  const client = db.client();
  const store = new DynamoDbLeaseStore({ client, tableName: table });
  const ids = Array.from({ length: partitionsOf.partitions }, (_, i) => i);
  try {
    const ends = new Map<string, number>();
    for (const topic of partitionsOf.topics) {
      for (const p of await admin.listOffsets(topic, ids))
        ends.set(`${topic}/${p.partition}`, p.logEndOffset);
    }
    for (;;) {
      let behind = 0;
      try {
        const leases = await store.list();
        for (const [key, end] of ends) {
          const lease = leases.find((l) => `${l.topic}/${l.partition}` === key);
          if (lease?.checkpoint !== end) behind++;
        }
      } catch {
        behind = ends.size;
      }
      if (behind === 0) return;
      if (Date.now() > deadline) {
        log(`catch-up timed out with ${behind} partitions behind`);
        return;
      }
      await sleep(1_000);
    }
  } finally {
    await admin.close();
    client.destroy();
  }
}

/** Reads every partition of both sides (the target at `targetIsolation`) and tallies them. */
export async function compare(
  src: Bootstrap,
  dst: Bootstrap,
  partitionsOf: { topics: readonly string[]; partitions: number },
  targetIsolation: SourceIsolationLevel,
  result: Tally,
  matching: Matching = "provenance",
): Promise<void> {
  const s = new ClusterView(src.bootstrapServers, "chaos-compare");
  const t = new ClusterView(dst.bootstrapServers, "chaos-compare", targetIsolation);
  try {
    for (const topic of partitionsOf.topics) {
      for (let partition = 0; partition < partitionsOf.partitions; partition++) {
        const tp = { topic, partition };
        const [fromSource, fromTarget] = await Promise.all([s.read(tp), t.read(tp)]);
        tally(fromSource, fromTarget, result, `${topic}/${partition}`, matching);
      }
    }
  } finally {
    await Promise.allSettled([s.close(), t.close()]);
  }
}

/**
 * Compares one partition pair by the source offset each target record is a copy of: the one its
 * provenance header names, or (matching "content") the first source record with the same content
 * not matched yet, the last one matched when all are (a duplicate).
 */
export function tally(
  fromSource: readonly MirrorRecord[],
  fromTarget: readonly MirrorRecord[],
  result: Tally,
  name = "?",
  matching: Matching = "provenance",
): void {
  const originOf = matching === "provenance" ? byProvenance(fromSource) : byContent(fromSource);
  const copies = new Map<number, number[]>();
  const note = (line: string) => {
    if (result.anomalies.length < MAX_ANOMALIES) result.anomalies.push(`${name} ${line}`);
  };
  // Target offsets of copies that came after a later source offset (a rewrite goes here too).
  const behind: number[] = [];
  let previous = -1;
  result.records += fromSource.length;
  for (const copy of fromTarget) {
    const origin = originOf(copy);
    if (origin.kind === "extra") {
      result.extra++;
      note(`target offset ${copy.offset}: no provenance header`);
      continue;
    }
    if (origin.kind === "unmatched") {
      result.altered++;
      note(`target offset ${copy.offset}: matches no source record`);
      continue;
    }
    const offset = origin.offset;
    if (origin.altered) {
      result.altered++;
      note(`offset ${offset}: altered copy at target offset ${copy.offset}`);
    }
    if (offset < previous) {
      result.out_of_order++;
      behind.push(copy.offset);
    }
    previous = Math.max(previous, offset);
    copies.set(offset, [...(copies.get(offset) ?? []), copy.offset]);
  }
  const lost: number[] = [];
  const duplicated: number[] = [];
  for (const r of fromSource) {
    const at = copies.get(r.offset) ?? [];
    if (at.length === 0) lost.push(r.offset);
    else if (at.length > 1) {
      result.duplicated += at.length - 1;
      duplicated.push(r.offset);
    }
  }
  result.lost += lost.length;
  for (const [first, last] of runs(lost)) note(`offsets ${first}-${last}: lost`);
  for (const [first, last] of runs(duplicated)) {
    const at = (offset: number) => (copies.get(offset) ?? []).join("+");
    note(`offsets ${first}-${last}: copied more than once, at target offsets ${at(first)} .. ${at(last)}`);
  }
  for (const [first, last] of runs(behind)) note(`target offsets ${first}-${last}: behind an earlier copy`);
}

/**
 * The source record a target record copies (altered: its content differs), or none: no provenance
 * header (extra), no source record of the same content (unmatched, counted as altered).
 */
type Origin = { kind: "copy"; offset: number; altered: boolean } | { kind: "unmatched" } | { kind: "extra" };

function byProvenance(fromSource: readonly MirrorRecord[]): (copy: MirrorRecord) => Origin {
  const bySourceOffset = new Map(fromSource.map((r) => [r.offset, r]));
  return (copy) => {
    const p = lastProvenance(copy, HEADER);
    if (p === null) return { kind: "extra" };
    const original = bySourceOffset.get(p.offset);
    const altered = original === undefined || recordImage(original) !== recordImage(copy);
    return { kind: "copy", offset: p.offset, altered };
  };
}

/**
 * Content matching: a copy with no source record of the same content is altered (or foreign: the
 * two cannot be told apart without provenance). Source records of the same content (a producer
 * retry that landed twice) are matched in order, so each still needs a copy of its own.
 */
function byContent(fromSource: readonly MirrorRecord[]): (copy: MirrorRecord) => Origin {
  const byImage = new Map<string, { offsets: number[]; next: number }>();
  for (const r of fromSource) {
    const image = recordImage(r);
    const entry = byImage.get(image);
    if (entry === undefined) byImage.set(image, { offsets: [r.offset], next: 0 });
    else entry.offsets.push(r.offset);
  }
  return (copy) => {
    const entry = byImage.get(recordImage(copy));
    if (entry === undefined) return { kind: "unmatched" };
    const offset = entry.offsets[Math.min(entry.next, entry.offsets.length - 1)] ?? -1;
    entry.next++;
    return { kind: "copy", offset, altered: false };
  };
}

/** Runs of consecutive numbers in an ascending list, as [first, last] pairs. */
function runs(sorted: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const n of sorted) {
    const run = out.at(-1);
    if (run !== undefined && run[1] === n - 1) run[1] = n;
    else out.push([n, n]);
  }
  return out;
}
