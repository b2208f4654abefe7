/**
 * The faults of the chaos run (scripts/chaos/run.ts), one loop each: SIGKILLs of worker processes,
 * broker faults on both clusters, DynamoDB Local outages, lease-store latency bursts through the
 * delay proxy, and worker freezes (SIGSTOP, then SIGCONT). Each loop draws from its own PRNG
 * stream of the run's seed, so one fault's draws do not shift when another loop runs more often.
 */
import type { ChildProcess } from "node:child_process";
import type { DelayProxy } from "../../test/helpers/delay-proxy.js";
import type { DynamoDbLocal } from "../../test/helpers/dynamodb-local.js";
import { seededRandom } from "../../test/helpers/fake-clock.js";
import { ApiKey, type MockKafka } from "../../test/helpers/mock-kafka.js";

export type Random = () => number;
export type Range = readonly [number, number];

/** What the loops need of the run; counters are bumped on `counts` as faults happen. */
export interface FaultContext {
  /** Wall-clock end of the fault phase. */
  readonly faultsEnd: number;
  readonly faultPhaseMs: number;
  readonly leaseDurationMs: number;
  readonly counts: FaultCounts;
  readonly log: (line: string) => void;
  /** Worker processes still running (frozen ones included). */
  readonly alive: () => ChildProcess[];
  /**
   * Workers frozen right now (freezeWorkers keeps it). The kill loop spares them: killing a frozen
   * worker turns a freeze into a plain kill, and with kills every ~2 s among 3 workers nearly
   * every freeze past the lease ended so, never waking to try its stale write.
   */
  readonly frozen: Set<ChildProcess>;
  /** Has `child` SIGSTOP itself inside its next write; false when it did not within `withinMs`. */
  readonly freezeInWrite: (child: ChildProcess, withinMs: number) => Promise<boolean>;
  /** When `child` last started a write (0: never). */
  readonly lastWriteAt: (child: ChildProcess) => number;
}

export interface FaultCounts {
  kills: number;
  broker_faults: number;
  dynamodb_outages: number;
  store_delays: number;
  freezes: number;
  /** Freezes longer than one lease duration. */
  freezes_past_lease: number;
  /** Freezes that stopped a worker inside a write (the rest stop it wherever it is). */
  freezes_in_write: number;
  /** Clean leader changes of source partitions (the leader epoch bumps, nothing is truncated). */
  leader_moves: number;
  /** Real Kafka: brokers SIGKILLed (then restarted), on either cluster. */
  broker_kills: number;
  /** Real Kafka: brokers SIGSTOPped (then SIGCONTed), on either cluster. */
  broker_freezes: number;
  /** Real Kafka: preferred-leader elections after a broker came back (leaders move back to it). */
  preferred_elections: number;
}

/** One PRNG per fault loop, all derived from the run's seed. */
export function stream(seed: number, index: number): Random {
  return index === 0 ? seededRandom(seed) : seededRandom((seed ^ Math.imul(index, 0x9e3779b1)) >>> 0);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const between = (random: Random, [lo, hi]: Range): number => lo + Math.floor(random() * (hi - lo));

/** `count` offsets from the start of the fault phase, sorted, away from its very edges. */
export function instants(random: Random, count: number, spanMs: number): number[] {
  return Array.from({ length: count }, () => Math.floor(spanMs * (0.03 + 0.94 * random()))).sort(
    (a, b) => a - b,
  );
}

/** Sleeps until `offsetMs` after `startedAt`. */
const sleepUntil = (startedAt: number, offsetMs: number) =>
  sleep(Math.max(0, startedAt + offsetMs - Date.now()));

/** SIGKILLs a random running worker every `everyMs`, frozen ones spared, until the fault phase ends. */
export async function killWorkers(
  ctx: FaultContext,
  random: Random,
  everyMs: Range,
  killedByUs: WeakSet<ChildProcess>,
): Promise<void> {
  while (Date.now() < ctx.faultsEnd) {
    await sleep(between(random, everyMs));
    const alive = ctx.alive();
    const victim = alive[Math.floor(random() * alive.length)];
    // A draw that lands on a frozen worker spares it: skipping frozen ones in the draw instead
    // would aim every kill at the few running workers, which then never live long enough to
    // take over a frozen worker's partitions.
    if (victim === undefined || ctx.frozen.has(victim)) continue;
    killedByUs.add(victim);
    if (victim.kill("SIGKILL")) ctx.counts.kills++;
  }
}

/** Broker down/up, leader moves, retriable request errors and RTT, on either cluster. */
export async function brokerFaults(
  ctx: FaultContext,
  random: Random,
  everyMs: Range,
  clusters: { src: MockKafka; dst: MockKafka; topics: readonly string[]; partitions: number },
): Promise<void> {
  const { src, dst, topics, partitions } = clusters;
  while (Date.now() < ctx.faultsEnd) {
    await sleep(between(random, everyMs));
    const cluster = random() < 0.5 ? src : dst;
    const broker = 1 + Math.floor(random() * 3);
    const kind = Math.floor(random() * 5);
    try {
      if (kind === 0) {
        await cluster.brokerDown(broker);
        await sleep(between(random, [500, 3_000]));
        await cluster.brokerUp(broker);
      } else if (kind === 1) {
        const topic = topics[Math.floor(random() * topics.length)] ?? "CHAOS-0";
        await cluster.setLeader(topic, Math.floor(random() * partitions), broker);
      } else if (kind === 2) {
        const api = INJECTED_APIS[Math.floor(random() * INJECTED_APIS.length)];
        // NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS: all retriable.
        await cluster.pushRequestErrors(api ?? ApiKey.Produce, [6, 7, 19, 6]);
      } else if (kind === 3) {
        await cluster.setRtt(broker, between(random, [100, 800]));
        await sleep(between(random, [500, 3_000]));
        await cluster.setRtt(broker, 0);
      } else {
        // Longer than the target's request timeout: produce requests land (the mock appends
        // on receipt) but time out at the worker, which must not write them again.
        await dst.setRtt(broker, between(random, [2_500, 4_000]));
        await sleep(between(random, [1_000, 4_000]));
        await dst.setRtt(broker, 0);
      }
      ctx.counts.broker_faults++;
    } catch (error) {
      ctx.log(`fault injection failed: ${String(error)}`);
    }
  }
  // Errors pushed for an API are consumed by its next requests, cluster-wide, whenever they come:
  // ListOffsets ones outlived the faults and failed the verdict's own read (chaos-faults.test.ts).
  for (const cluster of [src, dst]) {
    for (const api of INJECTED_APIS) await cluster.clearRequestErrors(api);
  }
}

/** The APIs whose requests are answered with injected errors. */
const INJECTED_APIS = [ApiKey.Produce, ApiKey.Fetch, ApiKey.ListOffsets, ApiKey.Metadata] as const;

/** What the leader-move loop needs of the source cluster. */
export interface LeaderMover {
  /** Broker ids 1..brokers. */
  readonly brokers: number;
  /**
   * Makes `broker`, or another replica when `broker` cannot lead it now (it leads already, or is
   * out of the ISR), the partition's leader: a leader election, so the leader epoch bumps.
   * Resolves to the broker that leads it now.
   */
  moveLeader(topic: string, partition: number, broker: number): Promise<number>;
}

/**
 * Clean source leader changes, as a rolling restart or a preferred-leader election makes them:
 * `count` of them at random instants of the fault phase, each moving a random partition to
 * another broker. What they test: a holder that reads across an epoch change, stops there, is
 * cut there or dies there must not take the change for a truncation (issue: exactly-once through
 * source leader changes).
 */
export async function moveLeaders(
  ctx: FaultContext,
  random: Random,
  count: number,
  source: { mover: LeaderMover; topics: readonly string[]; partitions: number },
): Promise<void> {
  const startedAt = Date.now();
  const { mover, topics, partitions } = source;
  const leaders = new Map<string, number>();
  for (const at of instants(random, count, ctx.faultPhaseMs)) {
    await sleepUntil(startedAt, at);
    const topic = topics[Math.floor(random() * topics.length)] ?? "CHAOS-0";
    const partition = Math.floor(random() * partitions);
    const key = `${topic}:${partition}`;
    // Another broker than the one this loop last made leader (the first time: any).
    const last = leaders.get(key);
    let broker = 1 + Math.floor(random() * mover.brokers);
    if (broker === last) broker = (broker % mover.brokers) + 1;
    try {
      const leader = await mover.moveLeader(topic, partition, broker);
      leaders.set(key, leader);
      ctx.counts.leader_moves++;
      ctx.log(`leader move: source ${key} to broker ${leader}`);
    } catch (error) {
      ctx.log(`leader move failed: ${String(error)}`);
    }
  }
}

/** DynamoDB Local stopped, then restarted on its data, `count` times spread over the phase. */
export async function dynamoOutages(
  ctx: FaultContext,
  random: Random,
  db: DynamoDbLocal,
  count: number,
): Promise<void> {
  for (let i = 0; i < count; i++) {
    await sleep(Math.floor(ctx.faultPhaseMs / (count + 1)));
    if (Date.now() >= ctx.faultsEnd) break;
    ctx.log("DynamoDB Local: stopping");
    await db.stop();
    await sleep(between(random, [2_000, 5_000]));
    await db.restart();
    ctx.counts.dynamodb_outages++;
    ctx.log("DynamoDB Local: back");
  }
}

export interface BurstOptions {
  /** Bursts per run, at random instants of the fault phase. */
  readonly count: number;
  /** Length of a short burst. */
  readonly shortMs: Range;
  /** Share of bursts longer than one lease duration (1.1 to 1.6 of it). */
  readonly longShare: number;
}

/**
 * Lease-store latency bursts: the proxy in front of DynamoDB Local holds bytes, then passes them
 * on in order, so renewals, claims and checkpoints land late (some after the lease expired). Each
 * burst holds either every connection or a random half of the open ones (at least one), and either both
 * directions or only new requests. Bursts may overlap.
 */
export async function storeDelays(
  ctx: FaultContext,
  random: Random,
  proxy: DelayProxy,
  options: BurstOptions,
): Promise<void> {
  const startedAt = Date.now();
  const lease = ctx.leaseDurationMs;
  for (const at of instants(random, options.count, ctx.faultPhaseMs)) {
    await sleepUntil(startedAt, at);
    const long = random() < options.longShare;
    const durationMs = long
      ? between(random, [Math.round(lease * 1.1), Math.round(lease * 1.6)])
      : between(random, options.shortMs);
    const direction = random() < 0.5 ? "both" : "requests";
    // Its own stream: how many connections are open must not shift the loop's later draws.
    const picker = seededRandom(Math.floor(random() * 2 ** 32));
    const open = proxy.connections();
    const everyConnection = picker() < 0.5 || open === 0;
    // A random half of the open connections, never none: one of them is always held.
    const always = Math.floor(picker() * open);
    let index = 0;
    const held = proxy.hold(durationMs, {
      direction,
      ...(everyConnection ? {} : { pick: () => index++ === always || picker() < 0.5 }),
    });
    ctx.counts.store_delays++;
    ctx.log(
      `store delay: ${durationMs} ms, ${direction}, ${everyConnection ? "every connection" : `${held} picked connection(s)`}`,
    );
  }
}

export interface FreezeOptions {
  /** Freezes per run, at random instants of the fault phase; 0 turns them off. */
  readonly count: number;
  /** Length of a short freeze. */
  readonly shortMs: Range;
  /** Share of the freezes "anywhere" longer than one lease duration (1.1 to 2 of it). */
  readonly longShare: number;
  /**
   * Share of freezes that stop the worker inside its next write (after its lease check, before or
   * between its produce requests, before its commit), the window only fencing closes, for longer
   * than the lease; the rest stop it wherever it is, as a GC pause would.
   */
  readonly inWriteShare: number;
}

/**
 * How long a worker asked to freeze inside a write may take to start one: 8 s on the mock (a new
 * worker needs ~3 s), three quarters of a lease on real Kafka's longer one, where a new worker's
 * claims wait for InitProducerId and a look at the target (at 8 s, 5 of 6 such freezes in a run
 * found no write to stop). The victim is spared by the kills meanwhile.
 */
function inWriteWaitMs(leaseDurationMs: number): number {
  return Math.max(8_000, Math.round(leaseDurationMs * 0.75));
}

/**
 * Worker freezes, as a GC pause or a suspended VM: SIGSTOP a random running worker, SIGCONT it
 * after a pause, some longer than the lease. A frozen worker is not SIGKILLed (see
 * FaultContext.frozen): it wakes and carries on with whatever it was doing, a write under a lease
 * that expired meanwhile included. Resolves once every frozen worker was let go.
 */
export async function freezeWorkers(
  ctx: FaultContext,
  random: Random,
  options: FreezeOptions,
): Promise<void> {
  const startedAt = Date.now();
  const lease = ctx.leaseDurationMs;
  const thaws: Promise<void>[] = [];
  for (const at of instants(random, options.count, ctx.faultPhaseMs)) {
    await sleepUntil(startedAt, at);
    const inWrite = random() < options.inWriteShare;
    // A freeze inside a write always outlasts the lease: that is when another holder fences it.
    const long = inWrite || random() < options.longShare;
    const pauseMs = long
      ? between(random, [Math.round(lease * 1.1), lease * 2])
      : between(random, options.shortMs);
    const pickAt = random();
    const frozen = await freezeOne(ctx, pickAt, inWrite);
    if (frozen === undefined) {
      ctx.log("freeze skipped: fewer than two workers running unfrozen");
      continue;
    }
    const { victim, how } = frozen;
    ctx.counts.freezes++;
    if (pauseMs > lease) ctx.counts.freezes_past_lease++;
    if (how === "in a write") ctx.counts.freezes_in_write++;
    ctx.log(`freeze: pid ${victim.pid} for ${pauseMs} ms, ${how}`);
    thaws.push(
      sleep(pauseMs).then(() => {
        ctx.frozen.delete(victim);
        victim.kill("SIGCONT");
        ctx.log(`thaw: pid ${victim.pid}`);
      }),
    );
  }
  await Promise.all(thaws);
}

/** Within this, a worker that started a write counts as writing. */
const RECENT_WRITE_MS = 5_000;

/**
 * The worker the `pickAt` share of the way through `alive`; for a freeze inside a write, through
 * the workers that wrote lately, if any. A worker that holds no partition writes nothing: a new
 * one, or one whose share waits for a killed holder's lease to expire (20 s on real Kafka, where
 * 5 of 6 freezes armed on any worker found no write to stop).
 */
function pick(
  ctx: FaultContext,
  alive: ChildProcess[],
  pickAt: number,
  inWrite: boolean,
): ChildProcess | undefined {
  const now = Date.now();
  const writing = inWrite ? alive.filter((c) => now - ctx.lastWriteAt(c) < RECENT_WRITE_MS) : [];
  const from = writing.length > 0 ? writing : alive;
  return from[Math.floor(pickAt * from.length)];
}

/**
 * Stops one running worker, the `pickAt` share of the way through the list, and marks it frozen.
 * In a write when asked and it writes soon enough, else at once. Undefined when fewer than two
 * unfrozen workers ran for longer than the longest freeze.
 */
async function freezeOne(
  ctx: FaultContext,
  pickAt: number,
  inWrite: boolean,
): Promise<{ victim: ChildProcess; how: string } | undefined> {
  // Right after a kill there may be no worker yet: wait for the next one. One worker always stays
  // unfrozen, to take over what the frozen ones hold (else no fence is ever raised against them).
  // Longer than the longest freeze (2 leases), so one of the frozen is let go meanwhile.
  const tries = Math.ceil((2 * ctx.leaseDurationMs + 4_000) / 100);
  for (let attempt = 0; attempt < tries; attempt++) {
    const alive = ctx.alive().filter((c) => !ctx.frozen.has(c));
    const victim = alive.length < 2 ? undefined : pick(ctx, alive, pickAt, inWrite);
    if (victim === undefined) {
      await sleep(100);
      continue;
    }
    // Marked first: the kill loop spares it while it is being armed, too.
    ctx.frozen.add(victim);
    if (inWrite && (await ctx.freezeInWrite(victim, inWriteWaitMs(ctx.leaseDurationMs))))
      return { victim, how: "in a write" };
    if (victim.kill("SIGSTOP")) return { victim, how: inWrite ? "at once (no write started)" : "anywhere" };
    ctx.frozen.delete(victim);
  }
  return undefined;
}
