import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MirrorRecord, TopicPartition } from "../../../../lib/core/model.js";
import type { Lease, LeaseStore, TargetWriter } from "../../../../lib/core/ports.js";
import { Worker } from "../../../../lib/core/run/worker.js";
import { checkWorkerSettings, type WorkerSettings } from "../../../../lib/core/run/worker-settings.js";
import { ReplicatorError } from "../../../../lib/errors.js";
import { type InMemoryCluster, makeRecords } from "../../../helpers/fake-cluster.js";
import { storeWith } from "../../../helpers/fake-leases.js";
import { fakeMapping } from "../../../helpers/fake-mapping.js";
import { inMemoryWorld } from "../../../helpers/pump-fixture.js";

const SETTINGS: WorkerSettings = {
  batch: { maxRecords: 20, maxBytes: 1 << 20, maxWaitMs: 500 },
  leases: { durationMs: 10_000, renewIntervalMs: 3_000, rebalanceIntervalMs: 2_000 },
  startFrom: "earliest",
  replicationFactor: 1,
  writeSafetyMarginMs: 1_000,
};

const TOPICS = { orders: 4, events: 3 } as const;

function env() {
  const world = inMemoryWorld();
  let tag = 0;
  for (const [topic, partitions] of Object.entries(TOPICS)) {
    world.source.createTopic(topic, partitions);
    for (let p = 0; p < partitions; p++)
      world.source.append({ topic, partition: p }, makeRecords(100, tag++));
  }
  return world;
}
type Env = ReturnType<typeof env>;

function partitions(): TopicPartition[] {
  return Object.entries(TOPICS).flatMap(([topic, n]) =>
    Array.from({ length: n }, (_, partition) => ({ topic, partition })),
  );
}

function workerFor(
  e: Env,
  workerId: string,
  ports: {
    source?: InMemoryCluster;
    target?: InMemoryCluster;
    leases?: LeaseStore;
    /** The worker's producer, when not the target cluster itself. */
    writer?: TargetWriter;
    slot?: string;
  } = {},
): Worker {
  return new Worker({
    workerId,
    ...(ports.slot === undefined ? {} : { slot: ports.slot }),
    source: ports.source ?? e.source,
    target: ports.writer ?? ports.target ?? e.target,
    sourceAdmin: ports.source ?? e.source,
    targetAdmin: ports.target ?? e.target,
    leases: ports.leases ?? e.store,
    mapping: fakeMapping({ rename: (t) => `dr.${t}` }),
    settings: SETTINGS,
    clock: e.clock,
    logger: e.logger,
    metrics: e.metrics,
  });
}

const copied = (e: Env, tp: TopicPartition) =>
  e.target.records({ topic: `dr.${tp.topic}`, partition: tp.partition });
const valuesOf = (records: readonly MirrorRecord[]) => records.map((r) => r.value?.toString("hex"));

/** After a crash the target holds the source with some records repeated; nothing may be missing. */
function assertNothingLost(e: Env, tp: TopicPartition, maxDuplicates: number): number {
  const expected = valuesOf(e.source.records(tp));
  const actual = valuesOf(copied(e, tp));
  const firstSeen = actual.filter((v, i) => actual.indexOf(v) === i);
  assert.deepEqual(firstSeen, expected, `${tp.topic}/${tp.partition} lost or reordered records`);
  const duplicates = actual.length - expected.length;
  assert.ok(duplicates <= maxDuplicates, `${tp.topic}/${tp.partition}: ${duplicates} duplicates`);
  return duplicates;
}

/** Makes every call of `target` hang forever once `killSwitch.killed` is set: a frozen process. */
function killable<T extends object>(target: T, killSwitch: { killed: boolean }): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value = Reflect.get(obj, prop, obj);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => (killSwitch.killed ? new Promise(() => {}) : value.apply(obj, args));
    },
  });
}

describe("Worker", () => {
  it("two workers copy every record exactly once and in order when nothing fails", async () => {
    // Prepare
    const e = env();
    const deadline = e.clock.now() + 60_000;
    const a = workerFor(e, "A");
    const b = workerFor(e, "B");
    // More data arrives during the run.
    void e.clock.sleep(5_000).then(() => {
      for (const [i, tp] of partitions().entries()) e.source.append(tp, makeRecords(30, 50 + i));
    });

    // Act
    const [sa, sb] = await Promise.all([a.replicate(deadline), b.replicate(deadline)]);

    // Assess
    for (const tp of partitions()) {
      assert.deepEqual(
        valuesOf(copied(e, tp)),
        valuesOf(e.source.records(tp)),
        `${tp.topic}/${tp.partition}`,
      );
      const lease = e.store.get(tp);
      assert.equal(lease?.checkpoint, 130);
      assert.equal(lease?.owner, null, "every lease is released at the end");
    }
    assert.deepEqual(sa.errors, []);
    assert.deepEqual(sb.errors, []);
    assert.ok(
      sa.partitions.length > 0 && sb.partitions.length > 0,
      "both workers should have held partitions",
    );
    const total = [...sa.partitions, ...sb.partitions].reduce((n, p) => n + p.records, 0);
    assert.equal(total, 7 * 130);
    assert.ok(sa.endedAt <= deadline + 1_000);
  });

  it("a worker handing a lease over does not take it up again while the handover is under way", async () => {
    // A holds every lease; B arrives and asks for its share. A's handovers are slow to land.
    const e = env();
    e.target.hooks.beforeWrite = async () => {
      await e.clock.sleep(100);
    };
    const store = e.store;
    const slowHandOver = storeWith(store, {
      handOver: async (held: Lease, expiresAt: number) => {
        // Longer than a rebalance interval: A looks at the lease table while it is under way.
        await e.clock.sleep(SETTINGS.leases.rebalanceIntervalMs + 1_000);
        return store.handOver(held, expiresAt);
      },
    });
    const deadline = e.clock.now() + 60_000;
    const a = workerFor(e, "A", { leases: slowHandOver }).replicate(deadline, { stopWhenCaughtUp: true });
    while (!partitions().every((tp) => e.store.get(tp)?.owner === "A")) await e.clock.sleep(10);
    const b = workerFor(e, "B").replicate(deadline, { stopWhenCaughtUp: true });
    const [sa, sb] = await Promise.all([a, b]);

    assert.ok(sb.partitions.length > 0, "B took part");
    // Every record once: nothing written by two holders at a time.
    for (const tp of partitions()) assertNothingLost(e, tp, 0);
    const termsOfA = sa.partitions.reduce((n, p) => n + p.terms, 0);
    assert.equal(termsOfA, sa.partitions.length, "A ran each of its partitions in one term");
  });

  it("a worker whose handover is slow to land does not start copying the lease it is giving away", async () => {
    // Regression: lease-race seed 164430370 (by the lease alone) copied a batch twice. The giver
    // listed the lease table while its handover was under way, saw itself still the owner and
    // started a new pump on the lease, which kept writing after the taker had started.
    const e = env();
    e.target.hooks.beforeWrite = async () => {
      await e.clock.sleep(100);
    };
    const store = e.store;
    const handing = new Set<string>();
    const slowHandOver = storeWith(store, {
      handOver: async (held: Lease, expiresAt: number) => {
        handing.add(`${held.topic}/${held.partition}`);
        // Longer than a rebalance interval: A looks at the lease table while it is under way.
        await e.clock.sleep(SETTINGS.leases.rebalanceIntervalMs + 1_000);
        return store.handOver(held, expiresAt);
      },
    });
    // A writer of A's that notes each write to a partition A has begun to hand over.
    const late: string[] = [];
    const writerOfA: TargetWriter = {
      fences: e.target.fences,
      producerId: (tp) => e.target.producerId(tp),
      write: (tp, records, stamp, deadline, runDeadline) => {
        const key = `${tp.topic.replace(/^dr\./, "")}/${tp.partition}`;
        if (handing.has(key)) late.push(key);
        return e.target.write(tp, records, stamp, deadline, runDeadline);
      },
      fence: (tp, deadline) => e.target.fence(tp, deadline),
      endOpenTransaction: (tp, deadline) => e.target.endOpenTransaction(tp, deadline),
      useTransactionTimeout: () => {},
      close: () => e.target.close(),
    };
    let n = 0;
    let traffic = true;
    const producing = (async () => {
      for (; traffic; n++) {
        const records = makeRecords(1, 0).map((r) => ({ ...r, value: Buffer.from(`late-${n}`) }));
        for (const tp of partitions()) e.source.append(tp, records);
        await e.clock.sleep(200);
      }
    })();
    const deadline = e.clock.now() + 40_000;
    const a = workerFor(e, "A", { leases: slowHandOver, writer: writerOfA }).replicate(deadline);
    while (!partitions().every((tp) => e.store.get(tp)?.owner === "A")) await e.clock.sleep(10);
    const b = workerFor(e, "B").replicate(deadline);
    const [sa] = await Promise.all([a, b]);
    traffic = false;
    await producing;
    await workerFor(e, "C").replicate(e.clock.now() + 60_000, { stopWhenCaughtUp: true });

    assert.ok(handing.size > 0, "A handed leases over during its run");
    assert.deepEqual(late, [], "A wrote to partitions it had begun to hand over");
    const termsOfA = sa.partitions.reduce((t, p) => t + p.terms, 0);
    assert.equal(termsOfA, sa.partitions.length, "A ran each of its partitions in one term");
    for (const tp of partitions()) assert.deepEqual(valuesOf(copied(e, tp)), valuesOf(e.source.records(tp)));
  });

  it("a worker whose asker left while its handover was under way does not copy the lease before it is released (regression: a pump on a lease then released)", async () => {
    // A holds every lease; B asks for its share, and B's run ends while A's handovers are slow
    // to land: B withdraws its requests, so A's handovers are refused and A releases. Until
    // then the leases are still A's, and nothing else says they are going.
    const e = env();
    e.target.hooks.beforeWrite = async () => {
      await e.clock.sleep(100);
    };
    const store = e.store;
    const keyOf = (tp: TopicPartition) => `${tp.topic.replace(/^dr\./, "")}/${tp.partition}`;
    const giving = new Set<string>();
    const slowGiving = storeWith(store, {
      handOver: async (held: Lease, expiresAt: number) => {
        giving.add(keyOf(held));
        await e.clock.sleep(SETTINGS.leases.rebalanceIntervalMs + 1_000);
        const handed = await store.handOver(held, expiresAt);
        if (handed) giving.delete(keyOf(held));
        return handed;
      },
      release: async (held: Lease) => {
        const released = await store.release(held);
        giving.delete(keyOf(held));
        return released;
      },
    });
    let withdrawn = 0;
    const countingB = storeWith(store, {
      withdrawHandoff: async (observed, requester) => {
        const done = await store.withdrawHandoff(observed, requester);
        if (done) withdrawn++;
        return done;
      },
    });
    const late: string[] = [];
    const writerOfA: TargetWriter = {
      fences: e.target.fences,
      producerId: (tp) => e.target.producerId(tp),
      write: (tp, records, stamp, deadline, runDeadline) => {
        if (giving.has(keyOf(tp))) late.push(keyOf(tp));
        return e.target.write(tp, records, stamp, deadline, runDeadline);
      },
      fence: (tp, deadline) => e.target.fence(tp, deadline),
      endOpenTransaction: (tp, deadline) => e.target.endOpenTransaction(tp, deadline),
      useTransactionTimeout: () => {},
      close: () => e.target.close(),
    };
    let traffic = true;
    const producing = (async () => {
      for (let n = 0; traffic; n++) {
        const records = makeRecords(1, 0).map((r) => ({ ...r, value: Buffer.from(`late-${n}`) }));
        for (const tp of partitions()) e.source.append(tp, records);
        await e.clock.sleep(200);
      }
    })();
    const a = workerFor(e, "A", { leases: slowGiving, writer: writerOfA }).replicate(e.clock.now() + 30_000);
    while (!partitions().every((tp) => e.store.get(tp)?.owner === "A")) await e.clock.sleep(10);

    // Act: B's run ends while A's handovers are under way.
    await workerFor(e, "B", { leases: countingB }).replicate(e.clock.now() + 4_000);
    await a;
    traffic = false;
    await producing;
    await workerFor(e, "C").replicate(e.clock.now() + 60_000, { stopWhenCaughtUp: true });

    // Assess
    assert.ok(withdrawn > 0, "B's run ended with no request standing");
    assert.deepEqual(late, [], "A copied a lease it was giving back");
    for (const tp of partitions()) assert.deepEqual(valuesOf(copied(e, tp)), valuesOf(e.source.records(tp)));
    assert.ok(partitions().every((tp) => e.store.get(tp)?.owner === null));
  });

  it("hands a lease over as soon as its pump stops, not at the next lease round (regression: issue 13's stall)", async () => {
    // Prepare: A holds every lease and copies steady traffic; B joins and asks for its share.
    // For each lease A gives away: when A's store first showed it the request, when A handed over.
    const e = env();
    e.target.hooks.beforeWrite = async () => {
      await e.clock.sleep(50);
    };
    const store = e.store;
    const asked = new Map<string, number>();
    const gaps: number[] = [];
    const noting = async (lease: Promise<Lease>) => {
      const l = await lease;
      const key = `${l.topic}/${l.partition}`;
      if (l.handoffTo !== null && l.handoffTo !== l.owner && !asked.has(key)) asked.set(key, e.clock.now());
      return l;
    };
    const watched = storeWith(store, {
      checkpoint: (...args: Parameters<LeaseStore["checkpoint"]>) => noting(store.checkpoint(...args)),
      renew: (held: Lease, expiresAt: number) => noting(store.renew(held, expiresAt)),
      handOver: (held: Lease, expiresAt: number) => {
        const at = asked.get(`${held.topic}/${held.partition}`);
        if (at !== undefined) gaps.push(e.clock.now() - at);
        return store.handOver(held, expiresAt);
      },
    });
    let traffic = true;
    const producing = (async () => {
      for (let n = 0; traffic; n++) {
        for (const tp of partitions()) e.source.append(tp, makeRecords(1, 500 + n));
        await e.clock.sleep(100);
      }
    })();

    // Act
    const deadline = e.clock.now() + 30_000;
    const a = workerFor(e, "A", { leases: watched }).replicate(deadline);
    while (!partitions().every((tp) => e.store.get(tp)?.owner === "A")) await e.clock.sleep(10);
    const b = workerFor(e, "B").replicate(deadline);
    await Promise.all([a, b]);
    traffic = false;
    await producing;

    // Assess: the batch in flight and its checkpoint, well under a rebalance interval (2 s).
    assert.ok(gaps.length > 0, "A handed leases over");
    assert.ok(Math.max(...gaps) <= 500, `handovers ${gaps.join(", ")} ms after the request`);
  });

  it("a draining run hands every partition to the next run of its slot, then ends drained; nothing is copied twice", async () => {
    // Prepare: run-1 of slot 3 drains at +30 s; run-2 of slot 3 starts at +25 s. Data keeps coming.
    const e = env();
    const t0 = e.clock.now();
    const first = workerFor(e, "run-1", { slot: "3" });
    const second = workerFor(e, "run-2", { slot: "3" });
    void (async () => {
      for (let i = 0; i < 50; i++) {
        await e.clock.sleep(1_000);
        for (const [j, tp] of partitions().entries()) e.source.append(tp, makeRecords(2, 1_000 + i * 10 + j));
      }
    })();

    // Act
    const ending = first.replicate(t0 + 120_000, { drainAt: t0 + 30_000 });
    await e.clock.sleep(25_000);
    const next = second.replicate(t0 + 70_000);
    const s1 = await ending;
    const heldWhenFirstEnded = partitions().filter((tp) => e.store.get(tp)?.owner === "run-2").length;
    const s2 = await next;

    // Assess
    assert.equal(s1.endReason, "drained");
    assert.ok(
      s1.endedAt < t0 + 30_000 + 3 * SETTINGS.leases.rebalanceIntervalMs + SETTINGS.leases.renewIntervalMs,
    );
    assert.equal(heldWhenFirstEnded, partitions().length, "every partition went to the slot's next run");
    assert.equal(s2.partitions.length, partitions().length);
    for (const tp of partitions()) {
      assert.deepEqual(
        valuesOf(copied(e, tp)),
        valuesOf(e.source.records(tp)),
        `${tp.topic}/${tp.partition}`,
      );
    }
  });

  it("a draining run does not end while a lease it asked for is still to be handed to it", async () => {
    // Prepare: H (not running here) holds the only partition; D's leader turn asks H to hand it
    // to D, and H does so 5 s later, at a renewal. D drains from +1 s and holds nothing before.
    const e = inMemoryWorld();
    e.source.createTopic("orders", 1);
    e.source.append({ topic: "orders", partition: 0 }, makeRecords(10, 1));
    const tp: TopicPartition = { topic: "orders", partition: 0 };
    await e.store.ensure([tp]);
    const t0 = e.clock.now();
    assert.ok(await e.store.claim(e.store.get(tp) as Lease, "H", t0 + 60_000));
    const handing = (async () => {
      await e.clock.sleep(5_000);
      const lease = e.store.get(tp) as Lease;
      assert.equal(lease.handoffTo, "D", "D asked H for the lease");
      assert.ok(await e.store.handOver(lease, e.clock.now() + SETTINGS.leases.durationMs));
    })();

    // Act
    const summary = await workerFor(e, "D").replicate(t0 + 20_000, { drainAt: t0 + 1_000 });
    await handing;

    // Assess: D took the lease handed to it and gave it back at its end, so nobody is left
    // waiting for a holder that has gone (a handover to it would hold the partition idle until
    // the fresh expiry the giver set).
    assert.notEqual(summary.endReason, "drained");
    assert.equal(e.store.get(tp)?.owner ?? null, null, "the lease was left with a worker that has gone");
  });

  it("hands a lease over as soon as its pump has stopped for the handoff, not at the run loop's next wake", async () => {
    // Prepare: A copies alone with data coming; at +4.1 s (just after one of A's rounds) worker
    // B asks for orders/0. A's pump sees the request at its next checkpoint and stops.
    const e = env();
    const tp: TopicPartition = { topic: "orders", partition: 0 };
    const t0 = e.clock.now();
    let traffic = true;
    const producing = (async () => {
      for (let i = 0; traffic; i++) {
        await e.clock.sleep(100);
        e.source.append(tp, makeRecords(2, 5_000 + i));
      }
    })();
    const asked = (async () => {
      await e.clock.sleep(4_100);
      // B is alive (a holder hands over only to an asker whose heartbeat is live).
      const beat = { workerId: "B", slot: "B", startedAt: e.clock.now(), draining: false };
      await e.store.heartbeat({ ...beat, deadline: t0 + 60_000, expiresAt: t0 + 60_000 });
      assert.ok(await e.store.requestHandoff(e.store.get(tp) as Lease, "B"));
      const at = e.clock.now();
      while (e.store.get(tp)?.owner !== "B") await e.clock.sleep(10);
      return e.clock.now() - at;
    })();

    // Act
    const run = workerFor(e, "A").replicate(t0 + 12_000);
    const waited = await asked;
    traffic = false;
    await Promise.all([run, producing]);

    // Assess: the handover follows the pump's last checkpoint, well within a rebalance interval.
    assert.ok(waited < SETTINGS.leases.rebalanceIntervalMs / 2, `handed over ${waited} ms after the request`);
  });

  it("retries planning while a cluster is briefly unreachable, then copies everything", async () => {
    // Prepare: the source's metadata fails twice, as during a broker restart.
    const e = env();
    const listTopics = e.source.listTopics.bind(e.source);
    let failures = 2;
    e.source.listTopics = async () => {
      if (failures-- > 0) throw new ReplicatorError("KAFKA_RETRIABLE", "broker 1 not found in metadata");
      return listTopics();
    };

    // Act
    const summary = await workerFor(e, "A").replicate(e.clock.now() + 60_000, { stopWhenCaughtUp: true });

    // Assess
    assert.deepEqual(summary.errors, []);
    for (const tp of partitions()) assert.deepEqual(valuesOf(copied(e, tp)), valuesOf(e.source.records(tp)));
    assert.equal(
      e.logger.at("warn").filter((w) => w.message === "planning topics failed, retrying").length,
      2,
    );
  });

  it("ends the run with the error, not a throw, when planning keeps failing until the deadline", async () => {
    const e = env();
    e.source.listTopics = async () => {
      throw new ReplicatorError("KAFKA_RETRIABLE", "cluster unreachable");
    };

    const summary = await workerFor(e, "A").replicate(e.clock.now() + 20_000);

    assert.deepEqual(
      summary.errors.map((r) => r.code),
      ["KAFKA_RETRIABLE"],
    );
    assert.equal(summary.partitions.length, 0);
    assert.deepEqual(e.store.snapshot(), [], "no lease is created without a plan");
  });

  it("still throws a planning error that retrying cannot fix", async () => {
    const e = env();
    e.source.listTopics = async () => {
      throw new ReplicatorError("KAFKA_FATAL", "authorization failed");
    };

    await assert.rejects(workerFor(e, "A").replicate(e.clock.now() + 20_000), /authorization failed/);
  });

  it("a worker killed mid-run loses nothing; the next one repeats at most one batch per partition", async () => {
    const e = env();
    const killSwitch = { killed: false };
    let writes = 0;
    e.target.hooks.afterWrite = () => {
      // Killed after a write landed but before it was checkpointed: the worst instant.
      if (++writes === 9) killSwitch.killed = true;
    };
    const doomed = workerFor(e, "doomed", {
      source: killable(e.source, killSwitch),
      target: killable(e.target, killSwitch),
      leases: killable(e.store, killSwitch),
    });
    void doomed.replicate(e.clock.now() + 600_000);
    const killedAt = await (async () => {
      while (!killSwitch.killed) await e.clock.sleep(10);
      return e.clock.now();
    })();
    e.target.hooks.afterWrite = undefined;

    const survivor = workerFor(e, "survivor");
    const summary = await survivor.replicate(killedAt + 60_000);

    let duplicates = 0;
    for (const tp of partitions()) duplicates += assertNothingLost(e, tp, SETTINGS.batch.maxRecords);
    assert.ok(duplicates > 0, "the batch written just before the kill must have been repeated");
    assert.deepEqual(summary.errors, []);
    assert.equal(summary.partitions.length, 7);
    // The survivor could only start on the doomed worker's partitions once their leases expired.
    assert.ok(summary.partitions.every((p) => p.caughtUp));
  });

  it("never takes or renews a lease past the deadline, nor writes after it", async () => {
    const e = env();
    const expiries: number[] = [];
    const writeEnds: number[] = [];
    const store = e.store;
    const watched = storeWith(store, {
      claim: (observed, owner, expiresAt) => {
        expiries.push(expiresAt);
        return store.claim(observed, owner, expiresAt);
      },
      renew: (held, expiresAt) => {
        expiries.push(expiresAt);
        return store.renew(held, expiresAt);
      },
    });
    e.target.hooks.beforeWrite = async () => {
      await e.clock.sleep(400);
      writeEnds.push(e.clock.now());
    };
    for (const [i, tp] of partitions().entries()) e.source.append(tp, makeRecords(2_000, 50 + i));
    const deadline = e.clock.now() + 25_000;

    const summary = await workerFor(e, "A", { leases: watched }).replicate(deadline);

    assert.ok(expiries.length > 7);
    assert.ok(
      expiries.every((x) => x <= deadline),
      `expiry ${Math.max(...expiries) - deadline} ms past the deadline`,
    );
    assert.ok(expiries.includes(deadline), "late renewals should be capped at the deadline");
    assert.ok(writeEnds.length > 0 && writeEnds.every((t) => t <= deadline - 400));
    assert.equal(summary.endReason, "deadline");
    assert.ok(summary.partitions.every((p) => !p.caughtUp));
    for (const tp of partitions()) assert.equal(e.store.get(tp)?.owner, null);
    // Whatever was written was checkpointed: nothing to repeat next run.
    for (const tp of partitions()) assert.equal(e.store.get(tp)?.checkpoint, copied(e, tp).length);
  });

  it("ends early with stopWhenCaughtUp once everything it holds is caught up", async () => {
    const e = env();
    const deadline = e.clock.now() + 600_000;

    const summary = await workerFor(e, "A").replicate(deadline, { stopWhenCaughtUp: true });

    assert.equal(summary.endReason, "caught-up");
    assert.equal(summary.caughtUp, true);
    assert.ok(summary.endedAt < deadline - 500_000);
    for (const tp of partitions()) {
      assert.deepEqual(valuesOf(copied(e, tp)), valuesOf(e.source.records(tp)));
      assert.equal(e.store.get(tp)?.owner, null);
    }
  });

  it("does not call a run caught up while a partition whose lease ran out is unfinished", async () => {
    // Prepare: renewals of orders/0 never get through, so its pump stops each time its lease
    // runs out by our clock, long before the slow partition is copied; the others finish early.
    const e = env();
    const slow = { topic: "orders", partition: 0 };
    e.source.append(slow, makeRecords(400, 99));
    e.target.hooks.beforeWrite = async (tp) => {
      if (tp.partition === slow.partition && tp.topic === `dr.${slow.topic}`) await e.clock.sleep(1_000);
    };
    const store = e.store;
    const flaky = storeWith(store, {
      renew: async (held, expiresAt) => {
        if (held.topic === slow.topic && held.partition === slow.partition) {
          throw new ReplicatorError("LEASE_STORE_UNAVAILABLE", "renewal timed out");
        }
        return store.renew(held, expiresAt);
      },
    });

    // Act
    const summary = await workerFor(e, "A", { leases: flaky }).replicate(e.clock.now() + 600_000, {
      stopWhenCaughtUp: true,
    });

    // Assess
    assert.equal(summary.endReason, "caught-up");
    assertNothingLost(e, slow, 100);
    assert.equal(store.get(slow)?.checkpoint, 500);
  });

  it("a run --once newcomer that asked for a lease does not leave before it is handed over", async () => {
    // A holds every lease and copies slowly; B arrives with nothing to do but ask for a share.
    const e = env();
    e.target.hooks.beforeWrite = async () => {
      await e.clock.sleep(200);
    };
    const deadline = e.clock.now() + 600_000;
    const a = workerFor(e, "A").replicate(deadline, { stopWhenCaughtUp: true });
    while (!partitions().every((tp) => e.store.get(tp)?.owner === "A")) await e.clock.sleep(10);

    const b = await workerFor(e, "B").replicate(deadline, { stopWhenCaughtUp: true });
    const summaryA = await a;

    // Whatever B asked for it was handed and copied to the end before it left: no lease is left
    // with a worker that has gone, and nothing waited for a lease to expire.
    assert.ok(b.partitions.length > 0, "B left without the lease it asked for");
    assert.ok(b.partitions.every((p) => p.caughtUp));
    for (const tp of partitions()) {
      assert.deepEqual(valuesOf(copied(e, tp)), valuesOf(e.source.records(tp)));
      assert.equal(e.store.get(tp)?.owner, null, `${tp.topic}/${tp.partition} left with a gone worker`);
    }
    assert.equal(summaryA.endReason, "caught-up");
  });

  it("rides out a lease-store outage without writing past its leases and without losing records", async () => {
    const e = env();
    for (const [i, tp] of partitions().entries()) e.source.append(tp, makeRecords(1_000, 50 + i));
    const writeEnds: number[] = [];
    e.target.hooks.beforeWrite = async () => {
      await e.clock.sleep(100);
      writeEnds.push(e.clock.now());
    };
    const start = e.clock.now();
    const outageStart = start + 4_000;
    const outageEnd = start + 40_000;
    void e.clock.sleep(4_000).then(() => {
      e.store.unavailable = true;
    });
    void e.clock.sleep(40_000).then(() => {
      e.store.unavailable = false;
    });

    const summary = await workerFor(e, "A").replicate(start + 300_000, { stopWhenCaughtUp: true });

    // Leases were last renewed before the outage; no write may end after they ran out.
    const lastRenewBefore = outageStart;
    const duringOutage = writeEnds.filter((t) => t > outageStart && t < outageEnd);
    assert.ok(duringOutage.length > 0, "copying should go on while the leases are valid");
    assert.ok(duringOutage.every((t) => t <= lastRenewBefore + SETTINGS.leases.durationMs));
    assert.equal(summary.endReason, "caught-up");
    for (const tp of partitions()) assertNothingLost(e, tp, 1_000);
    assert.ok(e.logger.at("warn").some((l) => l.fields.code === "LEASE_STORE_UNAVAILABLE"));
  });

  it("reports a topic it cannot mirror (a target too small that cannot grow) and copies the others", async () => {
    const e = env();
    e.target.createTopic("dr.events", 2);
    e.target.createPartitions = async () => {
      throw new ReplicatorError("KAFKA_FATAL", "CreatePartitions refused by policy");
    };

    const summary = await workerFor(e, "A").replicate(e.clock.now() + 60_000, { stopWhenCaughtUp: true });

    assert.deepEqual(
      summary.errors.map((x) => [x.topic, x.code]),
      [["events", "TARGET_PARTITIONS_TOO_FEW"]],
    );
    assert.equal(summary.caughtUp, false);
    assert.deepEqual(
      summary.partitions.map((p) => p.source.topic),
      ["orders", "orders", "orders", "orders"],
    );
    assert.equal(copied(e, { topic: "orders", partition: 3 }).length, 100);
  });

  it("gives back at once the lease of a partition stopped on an unexpected error and copies the others", async () => {
    const e = env();
    e.target.hooks.beforeWrite = (tp) => {
      if (tp.topic === "dr.orders" && tp.partition === 1)
        throw new Error("not a ReplicatorError: an adapter bug");
    };
    const deadline = e.clock.now() + 60_000;

    const summary = await workerFor(e, "A").replicate(deadline);

    const failed = summary.partitions.find((p) => p.source.topic === "orders" && p.source.partition === 1);
    assert.equal(failed?.error?.code, "KAFKA_FATAL");
    assert.ok((failed?.terms ?? 0) > 1, "a failed partition is tried again after its backoff");
    assert.equal(e.store.get({ topic: "orders", partition: 1 })?.owner, null);
    assert.equal(copied(e, { topic: "orders", partition: 0 }).length, 100);
    assert.deepEqual(
      [...new Set(summary.errors.map((x) => `${x.topic}/${x.partition} ${x.code}`))],
      ["orders/1 KAFKA_FATAL"],
    );
  });
});

describe("checkWorkerSettings", () => {
  it("lists every problem at once", () => {
    const problems = checkWorkerSettings({
      ...SETTINGS,
      batch: { maxRecords: 0, maxBytes: 1, maxWaitMs: -1 },
      leases: { durationMs: 5_000, renewIntervalMs: 4_500, rebalanceIntervalMs: 1_000 },
    });

    assert.equal(problems.length, 3);
    assert.match(problems.join("\n"), /batch\.maxRecords/);
    assert.match(problems.join("\n"), /batch\.maxWaitMs/);
    assert.match(problems.join("\n"), /renewIntervalMs \+ writeSafetyMarginMs/);
  });

  it("makes the Worker constructor throw CONFIG_INVALID", () => {
    const e = env();
    assert.throws(
      () =>
        new Worker({
          workerId: "A",
          source: e.source,
          target: e.target,
          sourceAdmin: e.source,
          targetAdmin: e.target,
          leases: e.store,
          mapping: fakeMapping(),
          settings: { ...SETTINGS, writeSafetyMarginMs: 0 },
          clock: e.clock,
          logger: e.logger,
          metrics: e.metrics,
        }),
      (error: unknown) => error instanceof Error && "code" in error && error.code === "CONFIG_INVALID",
    );
  });
});
