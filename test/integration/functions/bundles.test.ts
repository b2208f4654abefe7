/**
 * The very bundles `cdk synth` produces (cdk.out assets, copied outside the repository so nothing
 * resolves from our node_modules) run in a separate Node process with the event their EventBridge
 * rule sends and a Lambda-like context, configured through the environment variables the template
 * gives the functions (parameter references replaced by local values), against two mock Kafka
 * clusters and DynamoDB Local.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { FUNCTION_NODE_FLAGS } from "../../../infra/node-flags.js";
import type { MirrorRecord } from "../../../lib/core/model.js";
import { createDynamoDbClient } from "../../../lib/dynamodb/client.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import {
  type BundleResult,
  bundleEnvironment,
  invokeBundle,
  localInvocationVariables,
  plaintextStackParameters,
} from "../../helpers/lambda-bundles.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { ClusterView, firstDifference } from "../../helpers/partition-data.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const REGION = "eu-west-1";
const PARTITIONS = 4;
const PER_PARTITION = 600;
const TOPICS = ["ORDERS", "CLICKS-EU"] as const;
const UNLISTED = "AUDIT";
/** Every value carries it, so a payload that leaks into logs is caught. */
const PAYLOAD_MARKER = "payload-marker-7f3a";
/** The functions' platform (Architecture.ARM_64) and the binary of @node-rs/crc32 for it. */
const LAMBDA_BINARY_PACKAGE = "@node-rs/crc32-linux-arm64-gnu";
const LAMBDA_BINARY = "crc32.linux-arm64-gnu.node";
/** ELF e_machine of AArch64. */
const EM_AARCH64 = 183;
/** What the bundle's CRC-32C is on this machine: its binary is arm64 Linux only. */
const EXPECTED_CRC32C = process.platform === "linux" && process.arch === "arm64" ? "native" : "js";

interface CfnResource {
  Type: string;
  Properties: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}

interface FunctionUnderTest {
  /** The bundle, copied out of cdk.out. */
  dir: string;
  variables: Record<string, unknown>;
  /** Logical id of the lease table, the one reference in the variables that is not a parameter. */
  tableId: string;
  /** The event the function's EventBridge rule sends (its Input). */
  event: string;
}

interface Invocation {
  result: BundleResult;
  emf: EmfDocument[];
  stdout: string;
}

type EmfDocument = Record<string, unknown> & { _aws: { CloudWatchMetrics: { Namespace: string }[] } };

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-4000);
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(" ")} exited ${code}\n${stderr}`)),
    );
  });
}

function record(topic: string, partition: number, i: number): MirrorRecord {
  const value = Buffer.concat([
    Buffer.from([0xff, partition, i & 0xff]),
    Buffer.from(`${PAYLOAD_MARKER}-${topic}-${i}`),
  ]);
  return {
    offset: i,
    timestamp: Date.now() - 60_000 + i,
    key: Buffer.from(`k${i % 17}`),
    value: i % 50 === 0 ? null : value,
    headers: [{ key: Buffer.from("h"), value: Buffer.from([i & 0xff]) }],
  };
}

/** Reads the functions, their rules' inputs and their bundles out of a synthesized template. */
function functionsOf(outdir: string, stackName: string): Record<"replicate" | "lag", FunctionUnderTest> {
  const template = JSON.parse(readFileSync(join(outdir, `${stackName}.template.json`), "utf8")) as {
    Resources: Record<string, CfnResource>;
  };
  const resources = Object.entries(template.Resources);
  const tableId = resources.find(([, r]) => r.Type === "AWS::DynamoDB::GlobalTable")?.[0];
  assert.ok(tableId, "lease table in the template");
  const find = (name: "replicate" | "lag", description: RegExp): FunctionUnderTest => {
    const entry = resources.find(
      ([, r]) => r.Type === "AWS::Lambda::Function" && description.test(String(r.Properties.Description)),
    );
    assert.ok(entry, `${name} function in the template`);
    const [logicalId, fn] = entry;
    const assetPath = fn.Metadata?.["aws:asset:path"];
    assert.equal(typeof assetPath, "string");
    const rule = resources
      .map(([, r]) => r)
      .find(
        (r) =>
          r.Type === "AWS::Events::Rule" &&
          (r.Properties.Targets as { Arn: unknown; Input: string }[]).some(
            (t) =>
              JSON.stringify(t.Arn).includes(logicalId) && (name === "lag" || t.Input.includes('"worker":1')),
          ),
      );
    assert.ok(rule, `schedule of ${name}`);
    const dir = mkdtempSync(join(tmpdir(), `kafka-mirror-${name}-`));
    cpSync(join(outdir, assetPath as string), dir, { recursive: true });
    return {
      dir,
      variables: (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables,
      tableId: tableId ?? "",
      event: (rule.Properties.Targets as { Input: string }[])[0]?.Input ?? "",
    };
  };
  return { replicate: find("replicate", /copies leased/), lag: find("lag", /replication lag/) };
}

describe("the synthesized Lambda bundles against local clusters", () => {
  let outdir: string;
  let functions: Record<"replicate" | "lag", FunctionUnderTest>;
  let source: MockKafka;
  let target: MockKafka;
  let dynamo: DynamoDbLocal;
  const table = `leases-${randomUUID()}`;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    outdir = mkdtempSync(join(tmpdir(), "kafka-mirror-cdk-out-"));
    // The real CLI, as a user runs it: bundles land in outdir exactly as they would be uploaded.
    await run(
      process.execPath,
      [
        join(ROOT, "node_modules/aws-cdk/bin/cdk"),
        "synth",
        "--quiet",
        "-c",
        `kafka-mirror:regions=${REGION}`,
        "-o",
        outdir,
      ],
      ROOT,
    );
    functions = functionsOf(outdir, `KafkaMirror-${REGION}`);
    [source, target, dynamo] = await Promise.all([
      startMockKafka({ brokers: 1 }),
      startMockKafka({ brokers: 1 }),
      startDynamoDbLocal(),
    ]);
    // DynamoDB Local keeps tables per region and access key: use the functions' own.
    const client = createDynamoDbClient({
      endpoint: dynamo.endpoint,
      region: REGION,
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      requestTimeoutMs: 5_000,
    });
    closers.push(async () => client.destroy());
    await createLeaseTable(client, table);
    const writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers, maxBatchRecords: 200 });
    closers.push(() => writer.close());
    for (const topic of [...TOPICS, UNLISTED]) {
      await source.createTopic(topic, PARTITIONS);
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const records = Array.from({ length: PER_PARTITION }, (_, i) => record(topic, partition, i));
        await writer.write({ topic, partition }, records);
      }
    }
  });

  after(async () => {
    for (const close of closers.reverse()) await close();
    await Promise.all([source?.stop(), target?.stop(), dynamo?.stop()]);
    for (const dir of [outdir, functions?.replicate.dir, functions?.lag.dir]) {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  });

  /** The function's template variables with parameter references replaced by local values. */
  function environment(fn: FunctionUnderTest): Record<string, string> {
    const clusters = { source: source.bootstrapServers, target: target.bootstrapServers };
    const parameters = plaintextStackParameters(clusters, "ORDERS|CLICKS-.*");
    return {
      // The tick (a mapping lookup) is left unset, so these short runs do not drain.
      ...bundleEnvironment(fn, parameters, table),
      ...localInvocationVariables(dynamo.endpoint, REGION),
    };
  }

  async function invoke(
    fn: FunctionUnderTest,
    budgetMs: number,
    extra: Record<string, string> = {},
  ): Promise<Invocation> {
    const { result, stdout } = await invokeBundle(fn, { ...environment(fn), ...extra }, budgetMs);
    const emf = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((d): d is EmfDocument => typeof d._aws === "object");
    return { result, emf, stdout };
  }

  function metric(emf: readonly EmfDocument[], name: string, topic?: string): number[] {
    return emf
      .filter((d) => (topic === undefined ? d.Topic === undefined : d.Topic === topic) && name in d)
      .map((d) => d[name] as number);
  }

  it("lag discovers the topics and reports their full lag, replicate copies them, lag then reads zero", async (t) => {
    const total = TOPICS.length * PARTITIONS * PER_PARTITION;

    // Act 1: the first lag tick, before anything was copied.
    const first = await invoke(functions.lag, 20_000);

    // Assess 1
    assert.equal(first.result.ok, true, first.result.error);
    assert.deepEqual(first.result.result, {
      partitions: TOPICS.length * PARTITIONS,
      discovered: TOPICS.length * PARTITIONS,
      maxLagRecords: PARTITIONS * PER_PARTITION,
      maxLagSeconds: first.result.result?.maxLagSeconds ?? -1,
      stalledPartitions: 0,
      // No groups.whitelist: the sync step has nothing to do.
      groupsSynced: 0,
      groupSyncErrors: 0,
    });
    // The oldest pending record was written about a minute before the test's produce started.
    assert.ok((first.result.result?.maxLagSeconds ?? 0) >= 55, JSON.stringify(first.result));
    for (const topic of TOPICS) {
      assert.deepEqual(metric(first.emf, "LagRecords", topic), [PARTITIONS * PER_PARTITION], topic);
    }
    assert.deepEqual(metric(first.emf, "LagRecords", UNLISTED), []);
    assert.deepEqual(metric(first.emf, "MaxLagRecords"), [PARTITIONS * PER_PARTITION]);
    assert.equal(first.emf[0]?._aws.CloudWatchMetrics[0]?.Namespace, "KafkaMirror");
    assert.equal(first.emf[0]?.service, `KafkaMirror-${REGION}`);

    // Act 2: one replicate invocation with 25 s left (its run ends 10 s before that), at debug
    // level for the worker's line on its CRC-32C.
    const copy = await invoke(functions.replicate, 25_000, { POWERTOOLS_LOG_LEVEL: "DEBUG" });

    // Assess 2: started as Lambda starts it, on the runtime's Node release (nodejs22.x), through
    // the bundle's exec wrapper and its flags.
    assert.equal(copy.result.ok, true, copy.result.error);
    assert.match(copy.result.node ?? "", /^v22\./);
    assert.deepEqual(copy.result.execArgv, [...FUNCTION_NODE_FLAGS]);
    assert.equal(copy.result.result?.records, total);
    assert.equal(copy.result.result?.errors, 0);
    // Leases and checkpoints were settled before the invocation's time ran out, and nothing is held.
    assert.ok((copy.result.remainingMs ?? -1) > 0, `returned with ${copy.result.remainingMs} ms left`);
    const leaseClient = createDynamoDbClient({
      endpoint: dynamo.endpoint,
      region: REGION,
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
      requestTimeoutMs: 5_000,
    });
    closers.push(async () => leaseClient.destroy());
    const leases = await new DynamoDbLeaseStore({ client: leaseClient, tableName: table }).list();
    assert.equal(leases.length, TOPICS.length * PARTITIONS);
    for (const lease of leases) {
      assert.equal(lease.owner, null, `${lease.topic}/${lease.partition} still held`);
      assert.equal(lease.checkpoint, PER_PARTITION, `${lease.topic}/${lease.partition} checkpoint`);
    }
    for (const topic of TOPICS) {
      assert.deepEqual(metric(copy.emf, "RecordsCopied", topic), [PARTITIONS * PER_PARTITION], topic);
      assert.ok((metric(copy.emf, "BytesCopied", topic)[0] ?? 0) > PARTITIONS * PER_PARTITION * 10);
    }
    assert.deepEqual(metric(copy.emf, "TotalLostRecords"), [0]);
    assert.deepEqual(metric(copy.emf, "TotalErrors"), [0]);
    const sourceView = new ClusterView(source.bootstrapServers);
    const targetView = new ClusterView(target.bootstrapServers);
    closers.push(
      () => sourceView.close(),
      () => targetView.close(),
    );
    for (const topic of TOPICS) {
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const tp = { topic, partition };
        const [a, b] = await Promise.all([sourceView.read(tp), targetView.read(tp)]);
        assert.equal(a.length, PER_PARTITION);
        assert.equal(firstDifference(a, b), -1, `${topic}/${partition}`);
      }
    }
    assert.equal(
      (await targetView.admin.listTopics()).find((t) => t.name === UNLISTED),
      undefined,
      "the unlisted topic is not copied",
    );

    // Act 3: the next lag tick.
    const second = await invoke(functions.lag, 20_000);

    // Assess 3
    assert.equal(second.result.result?.maxLagRecords, 0);
    assert.equal(second.result.result?.discovered, 0);
    assert.deepEqual(metric(second.emf, "MaxLagRecords"), [0]);
    assert.deepEqual(metric(second.emf, "MaxLagSeconds"), [0]);
    for (const topic of TOPICS) assert.deepEqual(metric(second.emf, "LagRecords", topic), [0]);

    // What an operator would see in CloudWatch, in the test report.
    t.diagnostic(`replicate result: ${JSON.stringify(copy.result.result)}`);
    for (const doc of [
      ...first.emf.slice(0, 1),
      ...first.emf.slice(-1),
      ...copy.emf.slice(0, 1),
      ...second.emf.slice(-1),
    ]) {
      t.diagnostic(`EMF ${JSON.stringify(doc)}`);
    }

    // Logs are structured JSON and never carry a payload.
    for (const invocation of [first, copy, second]) {
      assert.ok(!invocation.stdout.includes(PAYLOAD_MARKER), "a payload reached stdout");
    }
    assert.ok(copy.stdout.split("\n").some((l) => l.includes('"message":"replication run finished"')));
    // On a host other than arm64 Linux the bundle's arm64 binary cannot load: the loader ran (it
    // is in the bundle) and the copy above was checked and summed by the JavaScript fallback.
    const crc = copy.stdout
      .split("\n")
      .filter((l) => l.includes('"message":"crc32c implementation"'))
      .map((l) => JSON.parse(l) as { implementation: string; reason: string });
    assert.equal(crc.length, 1);
    assert.equal(crc[0]?.implementation, EXPECTED_CRC32C, crc[0]?.reason);
    if (EXPECTED_CRC32C === "js")
      assert.match(crc[0]?.reason ?? "", /@node-rs\/crc32 did not load: Cannot find native binding/);
    assert.ok(existsSync(join(functions.replicate.dir, "node_modules", "kafkajs")));
  });

  it("carries @node-rs/crc32 with its arm64 Linux binary in both bundles, found from the loader", () => {
    for (const fn of [functions.replicate, functions.lag]) {
      // Prepare: the loader as the bundle has it, and the binary package it requires on arm64 Linux.
      const loader = join(fn.dir, "node_modules", "@node-rs", "crc32", "index.js");
      assert.ok(existsSync(loader), `${loader} in the bundle`);

      // Act: resolve the binary package the way the loader's own require does.
      const resolved = createRequire(loader).resolve(`${LAMBDA_BINARY_PACKAGE}/${LAMBDA_BINARY}`);

      // Assess: inside the bundle (it was copied out of the repository), an AArch64 ELF, at the
      // loader's version.
      assert.equal(resolved, join(fn.dir, "node_modules", LAMBDA_BINARY_PACKAGE, LAMBDA_BINARY));
      const header = readFileSync(resolved).subarray(0, 20);
      assert.deepEqual([...header.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], "ELF magic");
      assert.equal(header.readUInt16LE(18), EM_AARCH64, "e_machine");
      const version = (dir: string) =>
        (
          JSON.parse(readFileSync(join(fn.dir, "node_modules", dir, "package.json"), "utf8")) as {
            version: string;
          }
        ).version;
      assert.equal(version(LAMBDA_BINARY_PACKAGE), version("@node-rs/crc32"));
    }
  });
});
