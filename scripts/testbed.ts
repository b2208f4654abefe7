// `npm run testbed -- up [--dir DIR] [--brokers N]`: two local Kafka clusters (the test bed's
// librdkafka mock, as `demo` uses) with the demo's sample topics on the source, and a config file
// for them, kept running until Ctrl-C or `npm run testbed -- down [--dir DIR]`. The mock launcher
// exits when its stdin closes, so the clusters live as long as this process: `up` stays in the
// foreground and `down` signals it (its pid is in DIR/testbed.json).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  DEMO_PARTITIONS,
  DEMO_RECORDS_PER_PARTITION,
  DEMO_TOPICS,
  DEMO_UNLISTED_TOPIC,
  writeSampleTraffic,
} from "../lib/cli/commands/demo-traffic.js";
import { parseConfig } from "../lib/config/schema.js";
import { clusterSide } from "../lib/wiring.js";
import { MOCK_KAFKA_BINARY, type MockKafka, startMockKafka } from "../test/helpers/mock-kafka.js";
import { isRunning } from "../test/helpers/processes.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const STATE_FILE = "testbed.json";
const STOP_WAIT_MS = 15_000;
const DEFAULT_DIR = join(ROOT, ".testbed", "up");

interface UpState {
  readonly pid: number;
  readonly config: string;
}

function usage(message: string): never {
  process.stderr.write(`testbed: ${message}\nusage: npm run testbed -- up|down [--dir DIR] [--brokers N]\n`);
  process.exit(2);
}

async function readState(dir: string): Promise<UpState | null> {
  try {
    const state = JSON.parse(await readFile(join(dir, STATE_FILE), "utf8")) as UpState;
    return Number.isSafeInteger(state.pid) && isRunning(state.pid) ? state : null;
  } catch {
    return null;
  }
}

function configYaml(source: MockKafka, target: MockKafka, stateDir: string): string {
  return [
    "# Written by `npm run testbed -- up` for its two local clusters: valid while they are up.",
    `# The CLI's lease store for it: --state-dir ${stateDir}`,
    "source:",
    `  brokers: ${source.bootstrapServers.join(",")}`,
    "target:",
    `  brokers: ${target.bootstrapServers.join(",")}`,
    "topics:",
    `  whitelist: "${DEMO_TOPICS.join("|")}"`,
    "batch:",
    "  maxWaitMs: 100",
    "",
  ].join("\n");
}

/** Both clusters, or none: one that started is stopped when the other fails. */
async function startClusters(brokers: number): Promise<[MockKafka, MockKafka]> {
  const started = await Promise.allSettled([startMockKafka({ brokers }), startMockKafka({ brokers })]);
  const [source, target] = started;
  if (source?.status === "fulfilled" && target?.status === "fulfilled") return [source.value, target.value];
  await Promise.allSettled(started.map((s) => (s.status === "fulfilled" ? s.value.stop() : undefined)));
  throw (started.find((s): s is PromiseRejectedResult => s.status === "rejected") as PromiseRejectedResult)
    .reason;
}

/** The demo's topics and sample traffic on the source, so plan, run and verify have work. */
async function seed(source: MockKafka, target: MockKafka): Promise<void> {
  const all = [...DEMO_TOPICS, DEMO_UNLISTED_TOPIC];
  for (const topic of all) await source.createTopic(topic, DEMO_PARTITIONS);
  const config = parseConfig({
    source: { brokers: source.bootstrapServers },
    target: { brokers: target.bootstrapServers },
    topics: { whitelist: ".*" },
  });
  const writer = clusterSide(config, "source").writer({ compression: "lz4", maxBatchRecords: 1_000 });
  await writeSampleTraffic(writer, all);
}

/** `npm run testbed -- down`, with --dir when it is not the default. */
function downCommand(dir: string): string {
  return `npm run testbed -- down${dir === DEFAULT_DIR ? "" : ` --dir ${dir}`}`;
}

async function up(dir: string, brokers: number): Promise<number> {
  const running = await readState(dir);
  if (running !== null) {
    process.stderr.write(
      `testbed: already up (pid ${running.pid}), config ${running.config}; stop it with: ${downCommand(dir)}\n`,
    );
    return 1;
  }
  if (!existsSync(MOCK_KAFKA_BINARY)) {
    const setup = spawnSync("bash", [join(ROOT, "scripts", "setup-testbed.sh")], { stdio: "inherit" });
    if (setup.status !== 0) return 1;
  }
  await mkdir(dir, { recursive: true });
  const [source, target] = await startClusters(brokers);
  const stop = async () => {
    await Promise.allSettled([source.stop(), target.stop()]);
    await rm(join(dir, STATE_FILE), { force: true });
  };
  const stopped = new Promise<void>((resolveStop) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => resolveStop());
  });
  const config = join(dir, "mirror.yaml");
  const stateDir = join(dir, "state");
  try {
    await seed(source, target);
    await writeFile(config, configYaml(source, target, stateDir));
    await writeFile(
      join(dir, STATE_FILE),
      `${JSON.stringify({ pid: process.pid, config } satisfies UpState)}\n`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  const cli = `node ${join(ROOT, "bin", "kafka-mirror.js")}`;
  process.stdout.write(
    [
      `testbed up: two local Kafka clusters (librdkafka's mock, ${brokers} broker(s) each)`,
      `  source ${source.bootstrapServers.join(",")}: ${[...DEMO_TOPICS, DEMO_UNLISTED_TOPIC].join(", ")} ` +
        `(${DEMO_PARTITIONS} partitions x ${DEMO_RECORDS_PER_PARTITION} records; the whitelist leaves out ${DEMO_UNLISTED_TOPIC})`,
      `  target ${target.bootstrapServers.join(",")}: empty`,
      `config: ${config}`,
      "try:",
      `  ${cli} plan   --config ${config} --state-dir ${stateDir}`,
      `  ${cli} run    --config ${config} --state-dir ${stateDir} --once`,
      `  ${cli} verify --config ${config} --state-dir ${stateDir}`,
      `  ${cli} stop-store --state-dir ${stateDir}`,
      `stop with Ctrl-C, or from another terminal: ${downCommand(dir)}`,
      "",
    ].join("\n"),
  );
  await stopped;
  await stop();
  process.stdout.write("testbed: stopped both clusters\n");
  return 0;
}

async function down(dir: string): Promise<number> {
  const running = await readState(dir);
  if (running === null) {
    process.stdout.write(`testbed: none is up (${dir})\n`);
    return 0;
  }
  process.kill(running.pid, "SIGTERM");
  const giveUpAt = Date.now() + STOP_WAIT_MS;
  while (isRunning(running.pid)) {
    if (Date.now() > giveUpAt) {
      process.stderr.write(`testbed: pid ${running.pid} did not stop within ${STOP_WAIT_MS} ms\n`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stdout.write(`testbed: stopped (pid ${running.pid})\n`);
  return 0;
}

async function main(): Promise<number> {
  const { values, positionals } = (() => {
    try {
      return parseArgs({
        options: { dir: { type: "string" }, brokers: { type: "string" } },
        allowPositionals: true,
      });
    } catch (error) {
      return usage((error as Error).message);
    }
  })();
  const dir = resolve(values.dir ?? DEFAULT_DIR);
  const brokers = Number(values.brokers ?? "3");
  if (!Number.isSafeInteger(brokers) || brokers < 1 || brokers > 5)
    usage(`--brokers must be an integer from 1 to 5, got ${values.brokers}`);
  const [command, ...rest] = positionals;
  if (rest.length > 0) usage(`unexpected argument "${rest[0]}"`);
  if (command === "up") return up(dir, brokers);
  if (command === "down") return down(dir);
  return usage(command === undefined ? "up or down?" : `unknown command "${command}"`);
}

process.exit(await main());
