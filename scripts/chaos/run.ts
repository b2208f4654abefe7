/**
 * The chaos run behind `npm run chaos` (and, scaled down, a test in `npm test`): worker
 * PROCESSES with short budgets copy 3 topics x 8 partitions between two 3-broker mock clusters
 * while a producer writes to the source and a driver SIGKILLs workers at random instants, takes
 * brokers of both clusters down and up, moves partition leaders, injects retriable request
 * errors and RTT, and stops DynamoDB Local and restarts it on its data. Then every target
 * partition is compared with its source, record for record, by the provenance headers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel } from "kafkajs";
import type { MirrorConfigInput } from "../../lib/config/schema.js";
import type { MirrorRecord } from "../../lib/core/model.js";
import { DEFAULT_PROVENANCE_HEADER, lastProvenance } from "../../lib/core/provenance.js";
import { DynamoDbLeaseStore } from "../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../lib/dynamodb/lease-table.js";
import { KafkaClusterAdmin } from "../../lib/kafka/cluster-admin.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../test/helpers/dynamodb-local.js";
import { seededRandom } from "../../test/helpers/fakes.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../test/helpers/mock-kafka.js";
import { ClusterView, recordImage } from "../../test/helpers/partition-data.js";

export interface ChaosOptions {
  readonly topics: number;
  readonly partitions: number;
  /** Records produced per partition during the fault phase. */
  readonly recordsPerPartition: number;
  readonly workers: number;
  /** How long faults and kills go on. */
  readonly faultPhaseMs: number;
  /** Random pause between two SIGKILLs. */
  readonly killEveryMs: readonly [number, number];
  /** Random pause between two broker faults. */
  readonly faultEveryMs: readonly [number, number];
  /** DynamoDB Local outages (stop, then restart on its data) during the fault phase. */
  readonly dynamoOutages: number;
  /** Probability that a worker SIGKILLs itself right after a write was acknowledged. */
  readonly dieAfterAck: number;
  /** Random budget of one worker process. */
  readonly budgetMs: readonly [number, number];
  /** Longest wait for the workers to catch up once faults stop. */
  readonly catchUpTimeoutMs: number;
  readonly seed: number;
  readonly log?: (line: string) => void;
}

export const DEFAULT_CHAOS: ChaosOptions = {
  topics: 3,
  partitions: 8,
  recordsPerPartition: 2_500,
  workers: 3,
  faultPhaseMs: 90_000,
  killEveryMs: [500, 3_000],
  faultEveryMs: [1_500, 4_000],
  dynamoOutages: 2,
  dieAfterAck: 0.01,
  budgetMs: [6_000, 15_000],
  catchUpTimeoutMs: 240_000,
  seed: Date.now() % 1_000_000,
};

export interface ChaosResult {
  records: number;
  lost: number;
  duplicated: number;
  out_of_order: number;
  altered: number;
  extra: number;
  /** SIGKILLs of workers by the driver, at random instants. */
  kills: number;
  /** SIGKILLs workers did to themselves right after a target ack, before its checkpoint. */
  kills_after_ack: number;
  broker_faults: number;
  dynamodb_outages: number;
  retention_losses: number;
  /** Takeovers that found records of an unfinished write in the target (a kill between ack and checkpoint). */
  recoveries: number;
  worker_runs: number;
  seed: number;
}

const WORKER_SCRIPT = fileURLToPath(new URL("./worker.ts", import.meta.url));
const HEADER = Buffer.from(DEFAULT_PROVENANCE_HEADER);
const TABLE = "chaos-leases";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const o = options;
  const log = o.log ?? (() => {});
  const random = seededRandom(o.seed);
  const between = ([lo, hi]: readonly [number, number]) => lo + Math.floor(random() * (hi - lo));
  const topics = Array.from({ length: o.topics }, (_, i) => `CHAOS-${i}`);
  const dbPath = mkdtempSync(join(tmpdir(), "kafka-mirror-chaos-"));

  let source: MockKafka | undefined;
  let target: MockKafka | undefined;
  let dynamo: DynamoDbLocal | undefined;
  const children = new Set<ChildProcess>();
  const result: ChaosResult = {
    records: 0,
    lost: 0,
    duplicated: 0,
    out_of_order: 0,
    altered: 0,
    extra: 0,
    kills: 0,
    kills_after_ack: 0,
    broker_faults: 0,
    dynamodb_outages: 0,
    retention_losses: 0,
    recoveries: 0,
    worker_runs: 0,
    seed: o.seed,
  };
  const errors = new Map<string, number>();
  try {
    [source, target, dynamo] = await Promise.all([
      startMockKafka({ brokers: 3 }),
      startMockKafka({ brokers: 3 }),
      startDynamoDbLocal({ dbPath }),
    ]);
    const src = source;
    const dst = target;
    const db = dynamo;
    for (const topic of topics) {
      await src.createTopic(topic, o.partitions, 3);
      await dst.createTopic(topic, o.partitions, 3);
    }
    const setupClient = db.client();
    await createLeaseTable(setupClient, TABLE);
    setupClient.destroy();

    const config: MirrorConfigInput = {
      source: { brokers: src.bootstrapServers, alias: "chaos-src", requestTimeoutMs: 5_000 },
      target: { brokers: dst.bootstrapServers, alias: "chaos-dst", requestTimeoutMs: 2_000 },
      topics: { whitelist: "CHAOS-.*" },
      batch: { maxRecords: 500, maxWaitMs: 200 },
      leases: { table: TABLE, durationMs: 8_000, renewIntervalMs: 1_000, rebalanceIntervalMs: 1_000 },
    };

    let stopping = false;
    let workerSeq = 0;
    const killedByUs = new WeakSet<ChildProcess>();
    const spawnWorker = (): void => {
      if (stopping) return;
      const id = `w${++workerSeq}`;
      const child = spawn(process.execPath, ["--import", "tsx", WORKER_SCRIPT], {
        env: {
          ...process.env,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
          CHAOS_CONFIG: JSON.stringify(config),
          CHAOS_DYNAMODB: db.endpoint,
          CHAOS_BUDGET_MS: String(between(o.budgetMs)),
          CHAOS_WORKER_ID: id,
          CHAOS_DIE_AFTER_ACK: String(o.dieAfterAck),
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      result.worker_runs++;
      children.add(child);
      let out = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
          const line = out.slice(0, nl);
          out = out.slice(nl + 1);
          if (line.includes('"recovered"')) result.recoveries++;
          if (line.includes('"lost"')) {
            result.retention_losses++;
            log(`retention loss reported: ${line}`);
          }
        }
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        for (const line of chunk.toString("utf8").split("\n")) {
          const m = /"message":"([^"]+)"/.exec(line);
          const key = m?.[1] ?? line.slice(0, 120);
          if (key.trim() !== "") errors.set(key, (errors.get(key) ?? 0) + 1);
        }
      });
      child.once("exit", (_code, signal) => {
        children.delete(child);
        if (signal === "SIGKILL" && !killedByUs.has(child) && !stopping) {
          result.kills_after_ack++;
        }
        if (!stopping) spawnWorker();
      });
    };
    for (let i = 0; i < o.workers; i++) spawnWorker();

    // The producer: a known sequence per partition, spread over the fault phase.
    const producing = produce(src.bootstrapServers, topics, o, log);

    const faultsEnd = Date.now() + o.faultPhaseMs;
    const killing = (async () => {
      while (Date.now() < faultsEnd) {
        await sleep(between(o.killEveryMs));
        const alive = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
        const victim = alive[Math.floor(random() * alive.length)];
        if (victim === undefined) continue;
        killedByUs.add(victim);
        if (victim.kill("SIGKILL")) result.kills++;
      }
    })();
    const brokerFaults = (async () => {
      while (Date.now() < faultsEnd) {
        await sleep(between(o.faultEveryMs));
        const cluster = random() < 0.5 ? src : dst;
        const broker = 1 + Math.floor(random() * 3);
        const kind = Math.floor(random() * 5);
        try {
          if (kind === 0) {
            await cluster.brokerDown(broker);
            await sleep(between([500, 3_000]));
            await cluster.brokerUp(broker);
          } else if (kind === 1) {
            const topic = topics[Math.floor(random() * topics.length)] ?? "CHAOS-0";
            await cluster.setLeader(topic, Math.floor(random() * o.partitions), broker);
          } else if (kind === 2) {
            const api = [ApiKey.Produce, ApiKey.Fetch, ApiKey.ListOffsets, ApiKey.Metadata][
              Math.floor(random() * 4)
            ];
            // NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS: all retriable.
            await cluster.pushRequestErrors(api ?? ApiKey.Produce, [6, 7, 19, 6]);
          } else if (kind === 3) {
            await cluster.setRtt(broker, between([100, 800]));
            await sleep(between([500, 3_000]));
            await cluster.setRtt(broker, 0);
          } else {
            // Longer than the target's request timeout: produce requests land (the mock appends
            // on receipt) but time out at the worker, which must not write them again.
            await dst.setRtt(broker, between([2_500, 4_000]));
            await sleep(between([1_000, 4_000]));
            await dst.setRtt(broker, 0);
          }
          result.broker_faults++;
        } catch (error) {
          log(`fault injection failed: ${String(error)}`);
        }
      }
    })();
    const dynamoFaults = (async () => {
      for (let i = 0; i < o.dynamoOutages; i++) {
        await sleep(Math.floor(o.faultPhaseMs / (o.dynamoOutages + 1)));
        if (Date.now() >= faultsEnd) break;
        log("DynamoDB Local: stopping");
        await db.stop();
        await sleep(between([2_000, 5_000]));
        await db.restart();
        result.dynamodb_outages++;
        log("DynamoDB Local: back");
      }
    })();

    await Promise.all([killing, brokerFaults, dynamoFaults, producing]);
    for (const cluster of [src, dst]) {
      for (let b = 1; b <= 3; b++) {
        await cluster.brokerUp(b);
        await cluster.setRtt(b, 0);
      }
    }
    log(
      `faults over: ${result.kills} kills, ${result.broker_faults} broker faults, ${result.dynamodb_outages} DynamoDB outages; catching up`,
    );

    await waitForCatchUp(src, db, topics, o, log);
    stopping = true;
    for (const c of children) c.kill("SIGKILL");
    await Promise.all(
      [...children].map(
        (c) =>
          new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once("exit", () => resolve()))),
      ),
    );

    await compare(src, dst, topics, o.partitions, result);
    if (errors.size > 0) {
      const top = [...errors.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
      log(`worker errors logged: ${top.map(([k, n]) => `${n}x ${k}`).join("; ")}`);
    }
    return result;
  } finally {
    for (const c of children) c.kill("SIGKILL");
    await Promise.allSettled([source?.stop(), target?.stop(), dynamo?.stop()]);
    rmSync(dbPath, { recursive: true, force: true });
  }
}

/** A record whose value names its topic, partition and sequence number; never text-decoded later. */
function chaosValue(topic: number, partition: number, seq: number): Buffer {
  const out = Buffer.alloc(24);
  out[0] = 0xff;
  out.writeUInt16BE(topic, 1);
  out.writeUInt16BE(partition, 3);
  out.writeUInt32BE(seq, 5);
  out.fill(seq & 0xff, 9);
  return out;
}

async function produce(
  brokers: string[],
  topics: readonly string[],
  o: ChaosOptions,
  log: (line: string) => void,
): Promise<void> {
  const kafka = new Kafka({
    clientId: "chaos-producer",
    brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 2_000 },
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const perRound = 50;
  const rounds = Math.ceil(o.recordsPerPartition / perRound);
  const pause = Math.max(0, Math.floor((o.faultPhaseMs * 0.8) / rounds));
  try {
    for (let round = 0; round < rounds; round++) {
      const start = round * perRound;
      const end = Math.min(o.recordsPerPartition, start + perRound);
      await Promise.all(
        topics.map(async (topic, t) => {
          const messages = [];
          for (let p = 0; p < o.partitions; p++) {
            for (let seq = start; seq < end; seq++) {
              messages.push({
                partition: p,
                key: seq % 9 === 0 ? null : Buffer.from([0xfe, p, seq & 0xff]),
                value: seq % 13 === 0 ? null : chaosValue(t, p, seq),
                headers: { seq: Buffer.from(String(seq)), bin: Buffer.from([0xc3, 0x28, seq & 0xff]) },
              });
            }
          }
          for (;;) {
            try {
              await producer.send({ topic, acks: -1, messages });
              return;
            } catch (error) {
              // A failed send may have landed in part: the comparison is against what the
              // source holds, so a repeat here is data like any other.
              log(`producer send failed, retrying: ${String(error)}`);
              await sleep(500);
            }
          }
        }),
      );
      await sleep(pause);
    }
  } finally {
    await producer.disconnect();
  }
}

async function waitForCatchUp(
  src: MockKafka,
  db: DynamoDbLocal,
  topics: readonly string[],
  o: ChaosOptions,
  log: (line: string) => void,
): Promise<void> {
  const admin = new KafkaClusterAdmin({ brokers: src.bootstrapServers, clientId: "chaos-check" });
  const client = db.client();
  const store = new DynamoDbLeaseStore({ client, tableName: TABLE });
  const deadline = Date.now() + o.catchUpTimeoutMs;
  try {
    const ends = new Map<string, number>();
    for (const topic of topics) {
      for (const p of await admin.listOffsets(
        topic,
        Array.from({ length: o.partitions }, (_, i) => i),
      )) {
        ends.set(`${topic}/${p.partition}`, p.logEndOffset);
      }
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

async function compare(
  src: MockKafka,
  dst: MockKafka,
  topics: readonly string[],
  partitions: number,
  result: ChaosResult,
): Promise<void> {
  const s = new ClusterView(src.bootstrapServers, "chaos-compare");
  const t = new ClusterView(dst.bootstrapServers, "chaos-compare");
  try {
    for (const topic of topics) {
      for (let partition = 0; partition < partitions; partition++) {
        const tp = { topic, partition };
        const [fromSource, fromTarget] = await Promise.all([s.read(tp), t.read(tp)]);
        tally(fromSource, fromTarget, result);
      }
    }
  } finally {
    await Promise.allSettled([s.close(), t.close()]);
  }
}

/** Compares one partition pair by the source offsets the target's provenance headers name. */
export function tally(
  fromSource: readonly MirrorRecord[],
  fromTarget: readonly MirrorRecord[],
  result: ChaosResult,
): void {
  const bySourceOffset = new Map(fromSource.map((r) => [r.offset, r]));
  const seen = new Map<number, number>();
  let previous = -1;
  result.records += fromSource.length;
  for (const copy of fromTarget) {
    const p = lastProvenance(copy, HEADER);
    if (p === null) {
      result.extra++;
      continue;
    }
    const original = bySourceOffset.get(p.offset);
    if (original === undefined || recordImage(original) !== recordImage(copy)) result.altered++;
    if (p.offset < previous) result.out_of_order++;
    previous = Math.max(previous, p.offset);
    seen.set(p.offset, (seen.get(p.offset) ?? 0) + 1);
  }
  for (const r of fromSource) {
    const n = seen.get(r.offset) ?? 0;
    if (n === 0) result.lost++;
    else if (n > 1) result.duplicated += n - 1;
  }
}
