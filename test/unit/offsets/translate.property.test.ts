/**
 * Property: translating a group's source offset through a lease's offset map gives exactly what
 * a brute-force read of the whole target partition gives, for arbitrary interleavings of our
 * copies with other sources' records, records of our alias from other partitions, records
 * without provenance, aborted copies and markers (offsets a READ_COMMITTED read never returns),
 * source offsets never copied (compaction gaps, loops), target retention, and maps of any
 * density (thinned to 2..32 points, random points dropped, scan starts below the true bound).
 * Also with another producer's transaction open anywhere in the log: one that ends while the
 * translation waits changes nothing; one that never ends gives the exact answer or, only when
 * that answer needs what lies past the transaction's start, TARGET_TRANSACTION_OPEN.
 *
 * The same for target.copy "batches", where copies carry no header: the source's batches (some
 * with compaction gaps, so encoded again, some compacted away, a start inside a batch) copied
 * one to one by writes of a few batches each, a marker after each, with another producer's
 * batches (a plain one's and a transactional one's, some equal to the next source batch) and
 * aborted offsets interleaved, map points of any density between our last copy and the end, our
 * producer id given or learnt; against a brute-force answer from the copies the writes made.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { withPoint } from "../../../lib/core/lease/offset-map.js";
import type { FetchLimits, MirrorRecord, TopicPartition } from "../../../lib/core/model.js";
import type { OffsetMapPoint } from "../../../lib/core/ports.js";
import { encodeProvenance, lastProvenance } from "../../../lib/core/provenance.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { type Translation, translateOffset } from "../../../lib/offsets/translate.js";
import { recordsOf } from "../../helpers/fake-batches.js";
import { FakeClock, seededRandom } from "../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords } from "../../helpers/fake-cluster.js";

const HEADER = Buffer.from("kafka-mirror.provenance");
const ALIAS = "A";
const source: TopicPartition = { topic: "orders", partition: 3 };
const target: TopicPartition = { topic: "orders", partition: 3 };

type Step =
  | { readonly kind: "copy"; readonly gap: number }
  | { readonly kind: "other-alias" | "other-partition" | "plain" | "hidden" }
  | { readonly kind: "point"; readonly below: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("copy" as const), gap: fc.constantFrom(0, 0, 0, 1, 3) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom(
        "other-alias" as const,
        "other-partition" as const,
        "plain" as const,
        "hidden" as const,
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("point" as const), below: fc.constantFrom(0, 0, 1, 4) }),
  },
);

const scenarioArb = fc.record({
  start: fc.integer({ min: 0, max: 20 }),
  steps: fc.array(stepArb, { maxLength: 120 }),
  maxPoints: fc.constantFrom(2, 3, 8, 32),
  dropSeed: fc.integer({ min: 0, max: 2 ** 30 }),
  retainFrom: fc.constantFrom(0, 0, 0, 5, 30),
  /** Where in the copied source range (and a little beyond either end) the group committed. */
  query: fc.integer({ min: 0, max: 1000 }),
  /** Or right at a map point's boundary: the n-th point's source plus this (where off-by-ones live). */
  nearPoint: fc.option(fc.tuple(fc.nat(), fc.integer({ min: -2, max: 1 }))),
  /** Before which step another producer opens a transaction (none half the time), and whether it ends. */
  openBefore: fc.option(fc.nat({ max: 120 }), { freq: 2 }),
  ends: fc.boolean(),
});

function header(alias: string, partition: number, offset: number): MirrorRecord["headers"] {
  return [{ key: HEADER, value: encodeProvenance({ alias, partition, offset }) }];
}

/** Builds the target log and the map the lease would hold; returns the world. */
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function build(s: Scenario) {
  const cluster = new InMemoryCluster(new FakeClock());
  cluster.createTopic(target.topic, 4);
  const put = (headers: MirrorRecord["headers"]): void => {
    cluster.append(target, [{ timestamp: 0, key: null, value: Buffer.from("v"), headers }]);
  };
  // The origin: stored by the lease's first checkpoint, before anything was copied.
  let map: OffsetMapPoint[] = withPoint([], { source: s.start, target: 0, origin: true }, s.maxPoints);
  let next = s.start;
  let end = 0;
  let openAt: number | null = null;
  for (const [i, step] of s.steps.entries()) {
    if (i === s.openBefore) {
      cluster.openTransaction(target);
      openAt = end;
    }
    if (step.kind === "copy") {
      next += step.gap;
      put(header(ALIAS, source.partition, next));
      next++;
      end++;
    } else if (step.kind === "point") {
      // A checkpoint at `next` (or past a gap that follows), with a target position at or
      // before the end: every later copy lands at or after it.
      map = withPoint(map, { source: next, target: Math.max(0, end - step.below) }, s.maxPoints);
    } else if (step.kind === "hidden") {
      cluster.appendNonData(target); // a marker, or an aborted copy: READ_COMMITTED never returns it
      end++;
    } else {
      const [alias, partition] = step.kind === "other-alias" ? ["B", source.partition] : [ALIAS, 1];
      put(step.kind === "plain" ? [] : header(alias, partition, next + 100));
      end++;
    }
  }
  // Random points dropped (a stale base, a lost write), the origin kept.
  const random = seededRandom(s.dropSeed);
  map = map.filter((_, i) => i === 0 || random() >= 0.25);
  // Retention stays below an open transaction (a log starts at or before its LSO).
  if (s.retainFrom > 0) cluster.deleteBefore(target, Math.min(s.retainFrom, end, openAt ?? end));
  // The group's offset, spread over the source range the steps produced, a little beyond it too.
  const point = s.nearPoint === null ? undefined : map[s.nearPoint[0] % map.length];
  const spread = s.start - 3 + Math.floor((s.query / 1000) * (next - s.start + 6));
  const sourceOffset = Math.max(
    0,
    point === undefined || s.nearPoint === null ? spread : point.source + s.nearPoint[1],
  );
  return { cluster, map, end, sourceOffset, openAt };
}

/** The definition, read off the whole visible partition. */
function oracle(
  cluster: InMemoryCluster,
  offset: number,
): { targetOffset: number; next: number | null } | null {
  const ours = cluster
    .records(target)
    .map((r) => ({ at: r.offset, p: lastProvenance(r, HEADER) }))
    .filter((r) => r.p !== null && r.p.alias === ALIAS && r.p.partition === source.partition);
  const first = ours.find((r) => (r.p?.offset ?? -1) >= offset);
  if (first !== undefined) return { targetOffset: first.at, next: first.p?.offset ?? null };
  const last = ours[ours.length - 1];
  return last === undefined ? null : { targetOffset: last.at + 1, next: null };
}

describe("translateOffset (property)", () => {
  it("is exact for arbitrary interleavings, gaps, map densities and open transactions", async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const { cluster, map, end, sourceOffset, openAt } = build(s);
        const clock = new FakeClock();
        const retry = { clock, deadline: () => clock.now() + 60_000 };
        const deps = { reader: cluster, admin: cluster, header: HEADER, sourceAlias: ALIAS, retry };
        // Ends within the deadline, or never (the fake clock runs the wait in no time).
        if (openAt !== null && s.ends) void clock.sleep(5_000).then(() => cluster.endTransaction(target));
        const want = oracle(cluster, sourceOffset);
        let got: Translation;
        try {
          got = await translateOffset(deps, { source, target, map, sourceOffset });
        } catch (error) {
          assert.ok(isReplicatorError(error, "TARGET_TRANSACTION_OPEN"), String(error));
          assert.ok(openAt !== null && !s.ends, "waited for a transaction that ended, or none");
          assert.equal(error.details.lastStableOffset, openAt);
          // Only when the copy it looks for is not readable before the transaction.
          assert.ok(want?.next == null || want.targetOffset >= openAt, "gave up on an answer it could read");
          return;
        }
        if (want === null) {
          // Nothing of ours is visible: anywhere a later copy would still be read from.
          const [bounds] = await cluster.listOffsets(target.topic, [target.partition]);
          assert.ok(got.targetOffset >= (bounds?.logStartOffset ?? 0) && got.targetOffset <= end);
          assert.equal(got.nextSourceOffset, null);
        } else {
          assert.equal(got.targetOffset, want.targetOffset);
          assert.equal(got.nextSourceOffset, want.next);
        }
        // Never a full scan when a point at or below the offset is close to the answer.
        assert.ok(got.scanned <= end);
      }),
      { numRuns: Number(process.env.TRANSLATE_RUNS ?? 500) },
    );
  });
});

type BatchStep =
  /** One write of ours: the next source batches a fetch of up to `maxRecords` gives, then its marker. */
  | { readonly kind: "copy"; readonly maxRecords: number }
  /** Another producer's batch: plain or transactional, fresh or equal to the next source batch. */
  | { readonly kind: "other"; readonly plain: boolean; readonly same: boolean }
  /** Offsets READ_COMMITTED never returns: an aborted write, a marker. */
  | { readonly kind: "hidden"; readonly offsets: number }
  /** A checkpoint at the source position, its target anywhere from our last copy's end to the end. */
  | { readonly kind: "point"; readonly at: number };

const batchStepArb: fc.Arbitrary<BatchStep> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("copy" as const), maxRecords: fc.integer({ min: 1, max: 9 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("other" as const), plain: fc.boolean(), same: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("hidden" as const), offsets: fc.integer({ min: 1, max: 3 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("point" as const),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
);

const batchScenarioArb = fc.record({
  /** The source partition: batches of 1-5 records, a marker (a source transaction's) after some. */
  batches: fc.array(fc.record({ records: fc.integer({ min: 1, max: 5 }), marker: fc.boolean() }), {
    maxLength: 40,
  }),
  /** Compaction before copying: [at, at + length) removed, leaving gaps inside batches or whole ones gone. */
  compactions: fc.array(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 4 })), {
    maxLength: 6,
  }),
  /** Where copying began, as a share of the source (inside a batch too). */
  start: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1000 })),
  /** Another producer's records in the target before copying began. */
  preamble: fc.integer({ min: 0, max: 3 }),
  steps: fc.array(batchStepArb, { maxLength: 80 }),
  maxPoints: fc.constantFrom(2, 3, 8, 32),
  dropSeed: fc.integer({ min: 0, max: 2 ** 30 }),
  query: fc.integer({ min: 0, max: 1000 }),
  nearPoint: fc.option(fc.tuple(fc.nat(), fc.integer({ min: -2, max: 1 }))),
  /** Or inside (or just past) the source span of the n-th copy: where the counting within a batch lives. */
  inCopy: fc.option(fc.tuple(fc.nat(), fc.nat())),
  openBefore: fc.option(fc.nat({ max: 80 }), { freq: 2 }),
  ends: fc.boolean(),
  /** The caller passes our producer id (else the translation learns it). */
  known: fc.boolean(),
  /**
   * The lease's current checkpoint, which leaseMap adds as the newest point, most of the time:
   * with nothing copied past it, a group caught up or ahead makes the translation step back.
   */
  checkpoint: fc.option(fc.constantFrom(0, 0.5, 1), { freq: 3 }),
});

type BatchScenario = typeof batchScenarioArb extends fc.Arbitrary<infer T> ? T : never;

/** One copy of ours: where it begins in the target and the source records it holds. */
interface Copy {
  readonly base: number;
  readonly records: readonly MirrorRecord[];
}

const ALL: FetchLimits = { maxRecords: 1_000_000, maxBytes: 1 << 30, maxWaitMs: 0 };

async function buildSource(s: BatchScenario, clock: FakeClock) {
  const cluster = new InMemoryCluster(clock);
  cluster.createTopic(source.topic, 4);
  s.batches.forEach((b, i) => {
    cluster.append(source, makeRecords(b.records, i, 1_700_000_000_000 + i * 100));
    if (b.marker) cluster.appendNonData(source);
  });
  const [offsets] = await cluster.listOffsets(source.topic, [source.partition]);
  const end = offsets?.logEndOffset ?? 0;
  for (const [at, length] of s.compactions) {
    const from = Math.floor((at / 1000) * end);
    cluster.compact(source, from, from + length);
  }
  return { cluster, end };
}

/** Runs the mirror's writes as the steps say; returns the target, the map and the copies made. */
async function buildBatches(s: BatchScenario) {
  const clock = new FakeClock();
  const src = await buildSource(s, clock);
  const tgt = new InMemoryCluster(clock);
  tgt.createTopic(target.topic, 4);
  for (let i = 0; i < s.preamble; i++) tgt.append(target, makeRecords(1, 200 + i), -1n);
  let end = s.preamble;
  let pos = Math.floor((s.start / 1000) * src.end);
  let map: OffsetMapPoint[] = withPoint([], { source: pos, target: end, origin: true }, s.maxPoints);
  const copies: Copy[] = [];
  let lastCopyEnd = end;
  let openAt: number | null = null;
  for (const [i, step] of s.steps.entries()) {
    if (i === s.openBefore) {
      tgt.openTransaction(target);
      openAt = end;
    }
    if (step.kind === "copy") {
      const limits = { ...ALL, maxRecords: step.maxRecords };
      const fetched = await src.cluster.fetchBatches(source, pos, limits);
      pos = fetched.nextOffset;
      if (fetched.batches.length === 0) continue;
      await tgt.write(target, fetched.batches);
      for (const batch of fetched.batches) {
        copies.push({ base: end, records: recordsOf(batch) });
        end += batch.count;
      }
      lastCopyEnd = end;
      tgt.appendNonData(target); // the write's commit marker
      end++;
    } else if (step.kind === "other") {
      const next = (await src.cluster.fetchBatches(source, pos, { ...ALL, maxRecords: 1 })).batches[0];
      // A transactional producer's batch equal to ours is told apart only by a given producer id.
      const same = step.same && next !== undefined && (step.plain || s.known);
      const records = same ? recordsOf(next) : makeRecords(1 + (i % 2), 100 + i);
      tgt.append(target, records, step.plain ? -1n : 9n);
      end += records.length;
    } else if (step.kind === "hidden") {
      tgt.appendNonData(target, step.offsets);
      end += step.offsets;
    } else {
      const at = lastCopyEnd + Math.round(step.at * (end - lastCopyEnd));
      map = withPoint(map, { source: pos, target: at }, s.maxPoints);
    }
  }
  if (s.checkpoint !== null) {
    map = withPoint(map, {
      source: pos,
      target: lastCopyEnd + Math.round(s.checkpoint * (end - lastCopyEnd)),
    });
  }
  const random = seededRandom(s.dropSeed);
  map = map.filter((_, i) => i === 0 || random() >= 0.25);
  const sourceOffset = batchQuery(s, map, copies, src.end);
  return { clock, src: src.cluster, tgt, map, end, copies, sourceOffset, openAt };
}

/** The group's offset: spread over the source, at a map point's boundary, or inside a copy's span. */
function batchQuery(
  s: BatchScenario,
  map: readonly OffsetMapPoint[],
  copies: readonly Copy[],
  end: number,
): number {
  const copy = s.inCopy === null || copies.length === 0 ? undefined : copies[s.inCopy[0] % copies.length];
  if (copy !== undefined && s.inCopy !== null) {
    const first = copy.records[0]?.offset ?? 0;
    const span = (copy.records.at(-1)?.offset ?? 0) - first + 2;
    return first + (s.inCopy[1] % span);
  }
  const point = s.nearPoint === null ? undefined : map[s.nearPoint[0] % map.length];
  if (point !== undefined && s.nearPoint !== null) return Math.max(0, point.source + s.nearPoint[1]);
  const first = map[0]?.source ?? 0;
  return Math.max(0, first - 3 + Math.floor((s.query / 1000) * (end - first + 6)));
}

/** The definition, from the copies the writes made: the first whose batch holds or follows O. */
function batchOracle(
  copies: readonly Copy[],
  offset: number,
): { targetOffset: number; next: number | null } | null {
  const k = copies.find((c) => (c.records.at(-1)?.offset ?? -1) >= offset);
  if (k !== undefined) {
    const below = k.records.filter((r) => r.offset < offset).length;
    return { targetOffset: k.base + below, next: k.records[below]?.offset ?? null };
  }
  const last = copies.at(-1);
  return last === undefined ? null : { targetOffset: last.base + last.records.length, next: null };
}

describe("translateOffset in batches mode (property)", () => {
  it("is exact for batches copied one to one among other producers' batches, gaps, maps and open transactions", async () => {
    await fc.assert(
      fc.asyncProperty(batchScenarioArb, async (s) => {
        const { clock, src, tgt, map, end, copies, sourceOffset, openAt } = await buildBatches(s);
        const retry = { clock, deadline: () => clock.now() + 60_000 };
        const deps = { copy: "batches" as const, reader: tgt, admin: tgt, source: src, retry };
        if (openAt !== null && s.ends) void clock.sleep(5_000).then(() => tgt.endTransaction(target));
        const want = batchOracle(copies, sourceOffset);
        const request = { source, target, map, sourceOffset, ...(s.known ? { producerId: 7n } : {}) };
        let got: Translation;
        try {
          got = await translateOffset(deps, request);
        } catch (error) {
          assert.ok(isReplicatorError(error, "TARGET_TRANSACTION_OPEN"), String(error));
          assert.ok(openAt !== null && !s.ends, "waited for a transaction that ended, or none");
          assert.equal(error.details.lastStableOffset, openAt);
          assert.ok(want?.next == null || want.targetOffset >= openAt, "gave up on an answer it could read");
          return;
        }
        if (want === null) {
          assert.ok(
            got.targetOffset >= 0 && got.targetOffset <= end,
            `answer ${got.targetOffset} outside the log`,
          );
          assert.equal(got.nextSourceOffset, null);
        } else {
          assert.deepEqual([got.targetOffset, got.nextSourceOffset], [want.targetOffset, want.next]);
        }
        // (A message of our own: assert.ok builds one by reading the source, slow over a shrink.)
        assert.ok(got.scanned <= end, `read ${got.scanned} records of ${end}`);
      }),
      { numRuns: Number(process.env.TRANSLATE_RUNS ?? 500) },
    );
  });
});
