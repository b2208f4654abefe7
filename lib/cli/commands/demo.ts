/**
 * `kafka-mirror demo`: a newcomer's first run. Starts two local 3-broker Kafka clusters
 * (librdkafka's mock, built by `npm run setup:testbed`) and an embedded lease store in a
 * temporary state directory, writes sample traffic to BI topics like the field notes', runs three
 * workers until every checkpoint reaches the source log end while showing progress and lag, then
 * verifies the copy and prints one summary line. Everything it started is stopped in every case.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MockKafka, startMockKafka } from "../../../test/helpers/mock-kafka.js";
import { parseConfig } from "../../config/schema.js";
import type { ReplicationMetrics } from "../../core/ports.js";
import { stopLeaseServer } from "../../embedded/ensure.js";
import { KafkaClusterAdmin } from "../../kafka/cluster-admin.js";
import { KafkaSourceReader } from "../../kafka/source-reader.js";
import { createReplicator, topicSelectorOf } from "../../replicator.js";
import { verifyMirror } from "../../verify/verify-mirror.js";
import { CliError, ExitCode } from "../cli-error.js";
import { Closers } from "../closers.js";
import { type CliIo, CliLogger, count, isTerminal, LiveBlock, progressBar, renderTable } from "../console.js";
import { openLeaseTable } from "../leases.js";
import { statusRows } from "../status-rows.js";
import { mirrorHeaderOf } from "./context.js";
import {
  DEMO_PARTITIONS,
  DEMO_RECORDS_PER_PARTITION,
  DEMO_TOPICS,
  DEMO_UNLISTED_TOPIC,
  writeSampleTraffic,
} from "./demo-traffic.js";

const WORKERS = ["demo-worker-1", "demo-worker-2", "demo-worker-3"] as const;
const ROUND_MS = 30_000;
/** The copy takes one round or two; this bound only stops a broken build from looping forever. */
const MAX_ROUNDS = 10;

export interface DemoOptions {
  readonly debug: boolean;
  readonly signal: AbortSignal;
}

class DemoMetrics implements ReplicationMetrics {
  copied = 0;
  readonly lost: string[] = [];
  batchCopied(event: { records: number }): void {
    this.copied += event.records;
  }
  recordsLost(event: { topic: string; partition: number; from: number; to: number }): void {
    this.lost.push(`${event.topic}/${event.partition}: offsets ${event.from}..${event.to}`);
  }
  partitionError(): void {}
}

export async function demoCommand(options: DemoOptions, io: CliIo): Promise<number> {
  const say = (line: string): void => void io.stdout.write(`${line}\n`);
  const logger = new CliLogger(io, options.debug);
  const closers = new Closers((m) => logger.warn(m));
  // Ctrl-C also reaches the brokers (same process group); their vanishing is not news then.
  options.signal.addEventListener("abort", () => {
    logger.quiet = true;
  });
  const startedAt = Date.now();
  try {
    say("kafka-mirror demo: starting two 3-broker Kafka clusters and an embedded lease store…");
    const stateDir = await mkdtemp(join(tmpdir(), "kafka-mirror-demo-"));
    closers.add("state directory", () => rm(stateDir, { recursive: true, force: true }));
    closers.add("embedded lease server", () => stopLeaseServer(stateDir));
    const [source, target] = await startClusters(closers);
    options.signal.throwIfAborted();

    const all = [...DEMO_TOPICS, DEMO_UNLISTED_TOPIC];
    for (const topic of all) await source.createTopic(topic, DEMO_PARTITIONS);
    const total = DEMO_TOPICS.length * DEMO_PARTITIONS * DEMO_RECORDS_PER_PARTITION;
    say(
      `writing ${count(DEMO_PARTITIONS * DEMO_RECORDS_PER_PARTITION)} records to each of ${all.join(", ")} ` +
        `(${DEMO_PARTITIONS} partitions each) on the source…`,
    );
    await writeSampleTraffic(source.bootstrapServers, all);
    options.signal.throwIfAborted();

    const config = parseConfig({
      source: { brokers: source.bootstrapServers, alias: "idc1", requestTimeoutMs: 5_000 },
      target: { brokers: target.bootstrapServers, requestTimeoutMs: 1_500, compression: "lz4" },
      // MirrorMaker-style whitelist, as in the field notes.
      topics: { whitelist: DEMO_TOPICS.join("|") },
      batch: { maxRecords: 2_000, maxBytes: 256 * 1024, maxWaitMs: 100 },
      leases: { durationMs: 6_000, renewIntervalMs: 1_000, rebalanceIntervalMs: 300 },
    });
    const table = await openLeaseTable(config, stateDir, "embedded", logger);
    closers.add("lease table client", () => table.close());
    const sourceAdmin = new KafkaClusterAdmin({ brokers: source.bootstrapServers });
    closers.add("source admin", () => sourceAdmin.close());

    const metrics = new DemoMetrics();
    const workers = WORKERS.map((workerId) => {
      const replicator = createReplicator(config, { dynamodb: table.client, logger, metrics, workerId });
      closers.add(workerId, () => replicator.close());
      return replicator;
    });

    const lagView = async () => {
      const topics = [];
      for (const name of DEMO_TOPICS) {
        topics.push({
          name,
          offsets: await sourceAdmin.listOffsets(name, [...Array(DEMO_PARTITIONS).keys()]),
        });
      }
      return statusRows(topics, await table.store.list(), "earliest", Date.now());
    };
    const live = isTerminal(io) ? new LiveBlock(io) : null;
    const replicationStart = Date.now();
    const show = async (): Promise<number> => {
      const rows = await lagView();
      const lag = rows.reduce((n, r) => n + r.lag, 0);
      const elapsed = ((Date.now() - replicationStart) / 1_000).toFixed(1);
      if (live === null) {
        say(`  ${count(total - lag)} / ${count(total)} records copied, lag ${count(lag)}, ${elapsed} s`);
        return lag;
      }
      const perTopic = DEMO_TOPICS.map((topic) => {
        const own = rows.filter((r) => r.topic === topic);
        const end = own.reduce((n, r) => n + r.logEnd, 0);
        const behind = own.reduce((n, r) => n + r.lag, 0);
        return `  ${topic.padEnd(14)} ${progressBar(end - behind, end)}  lag ${count(behind)}`;
      });
      const owners = renderTable(
        ["Topic", "Pid", "Owner", "Checkpoint", "LogEnd", "Lag"],
        rows.map((r) => [r.topic, r.partition, r.owner, r.checkpoint, r.logEnd, r.lag]),
      );
      live.draw(
        [`replicating with ${WORKERS.length} workers, ${elapsed} s`, ...perTopic, "", owners].join("\n"),
      );
      return lag;
    };

    say(`replicating ${DEMO_TOPICS.join("|")} with ${WORKERS.length} workers…`);
    let drawing = Promise.resolve(0);
    const ticker = setInterval(
      () => {
        drawing = drawing.then(show, () => 0);
      },
      live === null ? 2_000 : 250,
    );
    closers.add("progress ticker", () => clearInterval(ticker));
    let lag = total;
    for (let round = 1; lag > 0; round++) {
      if (round > MAX_ROUNDS) throw new CliError(`not caught up after ${MAX_ROUNDS} rounds`, ExitCode.FAILED);
      await Promise.all(
        workers.map((w) =>
          w.worker.replicate(Date.now() + ROUND_MS, { stopWhenCaughtUp: true, signal: options.signal }),
        ),
      );
      options.signal.throwIfAborted();
      lag = (await lagView()).reduce((n, r) => n + r.lag, 0);
    }
    clearInterval(ticker);
    await drawing;
    await show();
    const replicationMs = Date.now() - replicationStart;
    if (metrics.lost.length > 0) {
      throw new CliError(`the workers reported records lost: ${metrics.lost.join("; ")}`, ExitCode.FAILED);
    }

    say("verifying: comparing every whitelisted partition of source and target…");
    const sourceReader = new KafkaSourceReader({ brokers: source.bootstrapServers });
    const targetReader = new KafkaSourceReader({ brokers: target.bootstrapServers });
    const targetAdmin = new KafkaClusterAdmin({ brokers: target.bootstrapServers });
    closers.add("verify clients", async () => {
      await Promise.allSettled([sourceReader.close(), targetReader.close(), targetAdmin.close()]);
    });
    const report = await verifyMirror({
      source: { reader: sourceReader, admin: sourceAdmin },
      target: { reader: targetReader, admin: targetAdmin },
      mapping: topicSelectorOf(config),
      mirrorHeader: mirrorHeaderOf(config),
      signal: options.signal,
    });
    const leaked = (await targetAdmin.listTopics()).some((t) => t.name === DEMO_UNLISTED_TOPIC);
    const verified = report.partitions.reduce((n, p) => n + p.sourceRecords, 0);
    const ok = report.ok && !leaked && verified === total;
    const problems = [
      ...report.topicProblems.map((p) => p.message),
      ...report.partitions.flatMap((p) => (p.mismatch === null ? [] : [p.mismatch.message])),
      ...(leaked ? [`${DEMO_UNLISTED_TOPIC} is not whitelisted but was created on the target`] : []),
      ...(verified === total ? [] : [`verified ${count(verified)} records, ${count(total)} were written`]),
    ];
    for (const problem of problems.slice(0, 5)) io.stderr.write(`MISMATCH ${problem}\n`);
    const detail = ok
      ? `verify OK: source and target identical record for record, ${DEMO_UNLISTED_TOPIC} not copied`
      : `verify FAILED: ${problems.length} problem(s), see above`;
    say(
      `kafka-mirror demo: ${count(verified)} records, ${DEMO_TOPICS.length} topics, ${report.partitions.length} partitions ` +
        `mirrored in ${(replicationMs / 1_000).toFixed(1)} s by ${WORKERS.length} workers; ${detail}; ` +
        `total ${((Date.now() - startedAt) / 1_000).toFixed(1)} s`,
    );
    return ok ? ExitCode.OK : ExitCode.FAILED;
  } catch (error) {
    if (options.signal.aborted) return ExitCode.INTERRUPTED;
    if (error instanceof Error && /setup:testbed/.test(error.message)) {
      throw new CliError(
        `${error.message}\nhint: \`npm run demo\` runs \`npm run setup:testbed\` first; run that on its own to see why it failed.`,
        ExitCode.FAILED,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await closers.closeAll();
  }
}

/** Starts both clusters in parallel; whichever started is registered for cleanup even if the other failed. */
async function startClusters(closers: Closers): Promise<[MockKafka, MockKafka]> {
  const started = await Promise.allSettled(
    ["source", "target"].map((side) =>
      startMockKafka({ brokers: 3 }).then((kafka) => {
        closers.add(`${side} Kafka cluster`, () => kafka.stop());
        return kafka;
      }),
    ),
  );
  const [source, target] = started;
  if (source?.status === "fulfilled" && target?.status === "fulfilled") return [source.value, target.value];
  throw (started.find((s): s is PromiseRejectedResult => s.status === "rejected") as PromiseRejectedResult)
    .reason;
}
