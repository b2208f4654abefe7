// Pins the test broker's transactional fencing and read_committed (our patch
// testbed/mock-kafka/patch-transactions.pl of librdkafka 2.15.1's mock) with independent clients
// only: librdkafka's own transactional producer (.testbed/bin/txn-client, testbed/txn-client/)
// and kcat (Debian's, librdkafka 2.0.2). Against the unpatched mock these tests fail (TESTING.md).
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { KCAT } from "../../helpers/kcat.js";
import { MOCK_KAFKA_BINARY, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const TXN_CLIENT = join(dirname(MOCK_KAFKA_BINARY), "txn-client");
const STEP_TIMEOUT_MS = 60_000;

/** What the fenced producer tries after the new holder's InitProducerId (see txn-client.c). */
type Late = "produce" | "add-partition" | "offsets" | "commit";

/** One "WHO STEP key=value ..." line of txn-client; `reason=` takes the rest of the line. */
type Step = Record<string, string>;

class TxnClient {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #steps = new Map<string, Step>();
  readonly #waiters: { key: string; resolve: (step: Step) => void }[] = [];
  readonly #exited: Promise<number | null>;
  #stderr = "";

  constructor(brokers: readonly string[], topic: string, transactionalId: string, late: Late) {
    this.#child = spawn(TXN_CLIENT, [brokers.join(","), topic, "0", transactionalId, late]);
    this.#child.stderr.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-4000);
    });
    this.#exited = new Promise((resolve) => this.#child.once("exit", (code) => resolve(code)));
    createInterface({ input: this.#child.stdout }).on("line", (line) => this.#onLine(line));
  }

  /** Resolves with the step "WHO STEP" (e.g. "P2 OPEN") once the client printed it. */
  step(key: string): Promise<Step> {
    const seen = this.#steps.get(key);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`txn-client printed no "${key}" within ${STEP_TIMEOUT_MS} ms; stderr: ${this.#stderr}`),
          ),
        STEP_TIMEOUT_MS,
      );
      this.#waiters.push({
        key,
        resolve: (step) => {
          clearTimeout(timer);
          resolve(step);
        },
      });
    });
  }

  /** Ends P2's open transaction and waits for the client to exit. */
  async end(action: "commit" | "abort"): Promise<Step> {
    this.#child.stdin.end(`${action}\n`);
    const ended = await this.step("P2 END");
    await this.step("DONE");
    assert.equal(await this.#exited, 0, `txn-client exit status; stderr: ${this.#stderr}`);
    return ended;
  }

  async kill(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill("SIGKILL");
    await this.#exited;
  }

  #onLine(line: string): void {
    const [who, what, ...rest] = line.split(" ");
    const key = what === undefined ? (who ?? "") : `${who} ${what}`;
    const step: Step = {};
    for (let i = 0; i < rest.length; i++) {
      const [name, ...value] = (rest[i] ?? "").split("=");
      if (name === "reason") {
        step.reason = [value.join("="), ...rest.slice(i + 1)].join(" ");
        break;
      }
      if (name) step[name] = value.join("=");
    }
    this.#steps.set(key, step);
    for (const waiter of this.#waiters.filter((w) => w.key === key)) waiter.resolve(step);
  }
}

interface KcatView {
  /** Record keys in offset order (txn-client's keys are ASCII labels, not payloads). */
  readonly keys: string[];
  readonly offsets: number[];
  /** Where kcat reached the partition's end: the LSO for read_committed. */
  readonly endOffset: number;
}

/** kcat -C -e on partition 0 from `from` (an offset or "end", a ListOffsets LATEST). */
function kcatView(
  brokers: readonly string[],
  topic: string,
  isolation: "read_committed" | "read_uncommitted",
  from: number | "end",
): Promise<KcatView> {
  const args = ["-C", "-e", "-b", brokers.join(","), "-t", topic, "-p", "0", "-o", String(from)];
  args.push("-X", `isolation.level=${isolation}`, "-f", "%o %k\\n");
  return new Promise((resolve, reject) => {
    const child = spawn(KCAT, args);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), STEP_TIMEOUT_MS);
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString("utf8");
      const end = /Reached end of topic \S+ \[0\] at offset (\d+)/.exec(stderr);
      if (code !== 0 || !end) {
        reject(new Error(`kcat ${args.join(" ")} failed (exit ${code}): ${stderr}`));
        return;
      }
      const lines = Buffer.concat(out).toString("latin1").split("\n").filter(Boolean);
      resolve({
        offsets: lines.map((l) => Number(l.split(" ")[0])),
        keys: lines.map((l) => l.split(" ")[1] ?? ""),
        endOffset: Number(end[1]),
      });
    });
  });
}

/** The offset of a record, by key: the first record of P2's open transaction is the LSO. */
function offsetOf(view: KcatView, key: string): number {
  const at = view.offsets[view.keys.indexOf(key)];
  assert.ok(at !== undefined, `no record ${key} in ${view.keys.join(",")}`);
  return at;
}

/** kafkajs 2.2.4's own Cluster and Broker (frozen internals): a raw Fetch shows what the broker
 * answers (LSO, aborted transactions, batches) before any client filters it, as kcat does. */
interface RawPartition {
  highWatermark: string;
  lastStableOffset: string;
  abortedTransactions: { producerId: string; firstOffset: string }[];
  messages: { offset: string; key: Buffer | null }[];
}
interface RawBroker {
  fetch(request: object): Promise<{ responses: { partitions: RawPartition[] }[] }>;
}
interface RawCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(options: { nodeId: number }): Promise<RawBroker>;
}
const require = createRequire(import.meta.url);
const Cluster = require("kafkajs/src/cluster/index.js") as new (options: object) => RawCluster;
const { createLogger, LEVELS } = require("kafkajs/src/loggers/index.js") as {
  createLogger(options: { level: number; logCreator: () => () => void }): unknown;
  LEVELS: { NOTHING: number };
};
const createSocketFactory = require("kafkajs/src/network/socketFactory.js") as () => unknown;

/** One raw Fetch of partition 0 from `offset` with the given isolation level (1: READ_COMMITTED). */
async function rawFetch(brokers: readonly string[], topic: string, isolationLevel: 0 | 1, offset: number) {
  const cluster = new Cluster({
    logger: createLogger({ level: LEVELS.NOTHING, logCreator: () => () => undefined }),
    socketFactory: createSocketFactory(),
    brokers: [...brokers],
    clientId: "testbed-raw-fetch",
    // Without explicit timeouts kafkajs's Cluster fails at once with "Connection timeout".
    connectionTimeout: 5000,
    authenticationTimeout: 5000,
    requestTimeout: 10_000,
    enforceRequestTimeout: true,
    metadataMaxAge: 300_000,
    retry: { retries: 2 },
    allowAutoTopicCreation: false,
    maxInFlightRequests: null,
    isolationLevel,
  });
  await cluster.connect();
  try {
    await cluster.addMultipleTargetTopics([topic]);
    const [leader] = Object.keys(cluster.findLeaderForPartitions(topic, [0]));
    const broker = await cluster.findBroker({ nodeId: Number(leader) });
    const response = await broker.fetch({
      replicaId: -1,
      isolationLevel,
      maxWaitTime: 100,
      minBytes: 1,
      maxBytes: 1 << 20,
      topics: [{ topic, partitions: [{ partition: 0, fetchOffset: String(offset), maxBytes: 1 << 20 }] }],
    });
    const partition = response.responses[0]?.partitions[0];
    assert.ok(partition, "a Fetch response for partition 0");
    return {
      highWatermark: Number(partition.highWatermark),
      lastStableOffset: Number(partition.lastStableOffset),
      abortedFirstOffsets: partition.abortedTransactions.map((a) => Number(a.firstOffset)),
      keys: partition.messages.map((m) => m.key?.toString("latin1") ?? ""),
    };
  } finally {
    await cluster.disconnect();
  }
}

const keys = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const P1_OPEN = keys("p1-open", 3);
const P2_COMMITTED = keys("p2-committed", 2);
const P2_OPEN = keys("p2-open", 2);

/** Runs txn-client up to P2's open transaction on a fresh topic. */
async function fence(kafka: MockKafka, late: Late): Promise<{ client: TxnClient; topic: string }> {
  const topic = `fencing-${late}-${randomUUID()}`;
  await kafka.createTopic(topic, 2);
  const client = new TxnClient(kafka.bootstrapServers, topic, `txn-${randomUUID()}`, late);
  await client.step("P2 OPEN");
  return { client, topic };
}

/** The fenced holder's commit fails with librdkafka's fatal _FENCED; the new holder works. */
async function assertFenced(client: TxnClient, refused: RegExp): Promise<void> {
  assert.equal((await client.step("P1 INIT")).err, "NO_ERROR");
  assert.equal((await client.step("P1 OPEN")).err, "NO_ERROR");
  assert.equal((await client.step("P2 INIT")).err, "NO_ERROR");
  assert.deepEqual(await client.step("P1 COMMIT"), { err: "_FENCED", fatal: "1", fenced: "1" });
  const fatal = await client.step("P1 FATAL");
  assert.equal(fatal.err, "_FENCED");
  assert.match(fatal.reason ?? "", refused, "the request refused for the old epoch");
  assert.equal((await client.step("P2 COMMIT")).err, "NO_ERROR");
  assert.equal((await client.step("P2 OPEN")).err, "NO_ERROR");
}

describe("test broker: transactional fencing and read_committed (patch-transactions.pl)", () => {
  let kafka: MockKafka;
  const clients: TxnClient[] = [];

  before(async () => {
    assert.ok(existsSync(TXN_CLIENT), `${TXN_CLIENT} is missing: run \`npm run setup:testbed\``);
    kafka = await startMockKafka({ brokers: 3 });
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.kill()));
    await kafka.stop();
  });

  it("fences the old holder of a transactional.id: Produce refused, commit fenced, open transaction aborted", async () => {
    // Prepare / Act: P1 has 3 records in an open transaction when P2 takes its transactional.id.
    const { client, topic } = await fence(kafka, "produce");
    clients.push(client);

    // Assess: P1's Produce with its old epoch is refused as such, and nothing of it lands.
    await assertFenced(client, /ProduceRequest .* old epoch/);
    assert.match((await client.step("P1 LATE")).err ?? "", /^(INVALID_PRODUCER_EPOCH|PRODUCER_FENCED)$/);
    const all = await kcatView(kafka.bootstrapServers, topic, "read_uncommitted", 0);
    assert.deepEqual(
      all.keys,
      [...P1_OPEN, ...P2_COMMITTED, ...P2_OPEN],
      "read_uncommitted sees every data record",
    );
    const committed = await kcatView(kafka.bootstrapServers, topic, "read_committed", 0);
    assert.deepEqual(committed.keys, P2_COMMITTED, "read_committed: not P1's aborted records, nothing open");
    const lso = offsetOf(all, "p2-open-0");
    assert.equal(committed.endOffset, lso, "read_committed Fetch ends at the LSO (P2's open transaction)");
  });

  it("answers the LSO to a read_committed ListOffsets LATEST, the log end to read_uncommitted", async () => {
    const { client, topic } = await fence(kafka, "produce");
    clients.push(client);
    const all = await kcatView(kafka.bootstrapServers, topic, "read_uncommitted", 0);
    const lso = offsetOf(all, "p2-open-0");
    const logEnd = all.endOffset;

    const latestCommitted = await kcatView(kafka.bootstrapServers, topic, "read_committed", "end");
    const latestUncommitted = await kcatView(kafka.bootstrapServers, topic, "read_uncommitted", "end");

    assert.ok(lso < logEnd);
    assert.equal(latestCommitted.endOffset, lso);
    assert.equal(latestUncommitted.endOffset, logEnd);
  });

  it("shows the open transaction to read_committed once it commits, and the LSO moves to the log end", async () => {
    const { client, topic } = await fence(kafka, "produce");
    clients.push(client);

    assert.equal((await client.end("commit")).err, "NO_ERROR");

    const committed = await kcatView(kafka.bootstrapServers, topic, "read_committed", 0);
    const all = await kcatView(kafka.bootstrapServers, topic, "read_uncommitted", 0);
    assert.deepEqual(committed.keys, [...P2_COMMITTED, ...P2_OPEN]);
    assert.equal(committed.endOffset, all.endOffset);
    assert.equal(
      (await kcatView(kafka.bootstrapServers, topic, "read_committed", "end")).endOffset,
      all.endOffset,
    );
  });

  it("answers a raw read_committed Fetch with the LSO, the aborted transactions and no batch past the LSO", async () => {
    const { client, topic } = await fence(kafka, "produce");
    clients.push(client);
    const all = await kcatView(kafka.bootstrapServers, topic, "read_uncommitted", 0);
    const lso = offsetOf(all, "p2-open-0");
    const brokers = kafka.bootstrapServers;

    const aborted = await rawFetch(brokers, topic, 1, 0);
    const committed = await rawFetch(brokers, topic, 1, offsetOf(all, "p2-committed-0"));
    const pastLso = await rawFetch(brokers, topic, 1, lso);
    const uncommitted = await rawFetch(brokers, topic, 0, lso);

    assert.deepEqual(aborted.keys, P1_OPEN, "the aborted batch itself is returned ...");
    assert.deepEqual(aborted.abortedFirstOffsets, [0], "... with P1's aborted transaction listed");
    assert.equal(aborted.lastStableOffset, lso);
    assert.equal(aborted.highWatermark, all.endOffset);
    assert.deepEqual(committed.keys, P2_COMMITTED);
    assert.deepEqual(committed.abortedFirstOffsets, [], "no aborted transaction overlaps a committed batch");
    assert.deepEqual(pastLso.keys, [], "read_committed: no batch at or past the LSO");
    assert.deepEqual(uncommitted.keys, P2_OPEN, "read_uncommitted: the open transaction's batch");
    assert.equal(
      uncommitted.lastStableOffset,
      all.endOffset,
      "read_uncommitted is left as upstream answers it",
    );
  });

  for (const [late, api, refused] of [
    ["add-partition", "AddPartitionsToTxn", /add partitions to transaction/],
    ["offsets", "AddOffsetsToTxn", /add offsets to transaction/],
    ["commit", "EndTxn", /end transaction/],
  ] as const) {
    it(`refuses the fenced holder's ${api}`, async () => {
      const { client, topic } = await fence(kafka, late);
      clients.push(client);

      await assertFenced(client, refused);
      assert.equal((await client.end("abort")).err, "NO_ERROR");
      const committed = await kcatView(kafka.bootstrapServers, topic, "read_committed", 0);
      const all = await kcatView(kafka.bootstrapServers, topic, "read_uncommitted", 0);
      assert.deepEqual(committed.keys, P2_COMMITTED, "P1's and P2's aborted transactions are hidden");
      assert.deepEqual(all.keys, [...P1_OPEN, ...P2_COMMITTED, ...P2_OPEN]);
      assert.equal(committed.endOffset, all.endOffset, "nothing open: the LSO is the log end");
    });
  }
});
