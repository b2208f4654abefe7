/**
 * The package as a user gets it: `npm pack`, then `npm install --omit=dev` of the tarball into an
 * empty directory, then the installed `kafka-mirror` bin against two local mock clusters. Only
 * production dependencies are installed (no tsx, no esbuild, no TypeScript), so anything the bin
 * still needs from the sources or the dev tools fails here. npm reads its cache first
 * (`--prefer-offline`): the dependencies are the repository's own, already in it.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { spawnCli } from "../../helpers/cli.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const run = promisify(execFile);
const TOPICS = ["BIN-BI-TOPIC", "PUSH-BI-TOPIC"] as const;
const RECORDS = 50;

/** The installed bin, with only what a user's shell has: no NODE_OPTIONS or loaders from the test runner. */
const kafkaMirror = (bin: string, args: readonly string[], cwd: string) =>
  spawnCli(args, { bin, cwd, env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: cwd } });

describe("the npm package", { timeout: 240_000 }, () => {
  let work: string;
  let app: string;
  let bin: string;
  let source: MockKafka;
  let target: MockKafka;
  let config: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "kafka-mirror-pack-"));
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], {
      cwd: REPO,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    assert.ok(packed);
    assert.deepEqual(packed.files.map((f) => f.path).sort(), [
      "README.md",
      "bin/kafka-mirror.js",
      "dist/cli.js",
      "dist/daemon.js",
      "package.json",
    ]);
    app = join(work, "app");
    await mkdir(app);
    await run(
      "npm",
      ["install", "--omit=dev", "--prefer-offline", "--no-audit", "--no-fund", join(work, packed.filename)],
      { cwd: app, maxBuffer: 16 * 1024 * 1024 },
    );
    bin = join(app, "node_modules", ".bin", "kafka-mirror");

    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    const writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
    try {
      for (const topic of [...TOPICS, "SCRIPT-BI-TOPIC"]) {
        await source.createTopic(topic, 2);
        for (const partition of [0, 1]) {
          await writer.write(
            { topic, partition },
            makeRecords(RECORDS, partition).map((r, i) => ({ ...r, offset: i })),
          );
        }
      }
    } finally {
      await writer.close();
    }
    config = join(app, "mirror.yaml");
    await writeFile(
      config,
      [
        "source:",
        `  brokers: ${source.bootstrapServers.join(",")}`,
        "target:",
        `  brokers: ${target.bootstrapServers.join(",")}`,
        "topics:",
        `  whitelist: "${TOPICS.join("|")}"`,
        "batch:",
        "  maxWaitMs: 100",
        "",
      ].join("\n"),
    );
  });

  after(async () => {
    if (app !== undefined) await stopLeaseServer(join(app, ".kafka-mirror"));
    await Promise.allSettled([source?.stop(), target?.stop()]);
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it("installs production dependencies only", () => {
    for (const dev of ["tsx", "esbuild", "typescript", "@biomejs/biome", "aws-cdk-lib"]) {
      assert.equal(existsSync(join(app, "node_modules", dev)), false, `${dev} was installed`);
    }
    assert.equal(existsSync(join(app, "node_modules", "kafka-mirror", "lib")), false, "sources were packed");
  });

  it("prints its usage with --help", async () => {
    const result = await kafkaMirror(bin, ["--help"], app);

    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^usage: kafka-mirror <command>/);
  });

  it("plans the mirror against local clusters", async () => {
    const result = await kafkaMirror(bin, ["plan", "--config", config, "--json"], app);

    assert.equal(result.code, 0, result.stderr);
    const plan = JSON.parse(result.stdout) as { selected: { source: string; action: string }[] };
    assert.deepEqual(
      plan.selected.map((p) => [p.source, p.action]),
      TOPICS.map((t) => [t, "create"]),
    );
  });

  it("demo says it needs a clone of the repository, and names no npm script the package lacks", async () => {
    const result = await kafkaMirror(bin, ["demo"], app);

    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(
      result.stderr,
      /only a clone of the kafka-mirror repository has: there, run `npm ci && npm run demo`/,
    );
    assert.match(result.stderr, /kafka-mirror init --output mirror\.yaml/);
    assert.doesNotMatch(result.stderr, /setup:testbed/);
  });

  // The embedded lease store's server is a second process started from the package's bundle.
  it("mirrors with --once through its embedded lease store", async () => {
    const result = await kafkaMirror(bin, ["run", "--once", "--config", config, "--json"], app);

    assert.equal(result.code, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as { records: number; partitions: number };
    assert.equal(summary.records, TOPICS.length * 2 * RECORDS);
    assert.equal(summary.partitions, TOPICS.length * 2);
  });
});
