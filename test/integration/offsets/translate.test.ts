/**
 * Offset translation through the real CLI (`kafka-mirror offsets`) and adapters, on a target
 * partition where another writer (librdkafka's own transactional producer, txn-client's script
 * mode) holds a transaction open below our copies: READ_COMMITTED stops at its start (the LSO),
 * our copies lie beyond it. While it stays open the command fails after its retry budget,
 * naming the transaction; once it ends during the wait, the translation is the exact copy.
 * Regression: the translation stopped at the LSO and answered it, "the next record copied".
 * The clusters are the mock or real Kafka (KAFKA_TESTBED); on real Kafka one more case: nobody
 * ends the other writer's transaction, the coordinator aborts it on its transaction.timeout.ms
 * while the command waits (the mock models no transaction timeouts).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { runCliCaptured as cli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { alterGroupOffsets } from "../../helpers/group-client.js";
import { KAFKA_TESTBED, startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { kcatProduce, kcatRead } from "../../helpers/kcat.js";
import { openTransactionAt } from "../../helpers/partition-data.js";
import { ScriptedProducer } from "../../helpers/txn-script.js";

/** Both sides' request timeout: the command retries one call (and waits) for 3 of them. */
const REQUEST_TIMEOUT_MS = 2_000;
/**
 * The other writer's transaction.timeout.ms in the real-Kafka case: long enough that its
 * transaction is still open when the command starts (checked), shorter than the command's budget.
 */
const OTHER_TIMEOUT_MS = 15_000;
const LONG_REQUEST_TIMEOUT_MS = 10_000;

describe("kafka-mirror offsets with another writer's transaction open on the target", () => {
  let source: TestKafka;
  let central: TestKafka;
  let dir: string;

  before(async () => {
    [source, central] = await Promise.all([startTestKafka({ brokers: 1 }), startTestKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-translate-"));
  });

  after(async () => {
    await stopLeaseServer(join(dir, "state")).catch(() => {});
    await Promise.allSettled([source?.stop(), central?.stop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The CLI options of a mirror of `topic` from the source into central, alias idc1. */
  async function configFor(topic: string, sourceRequestTimeoutMs: number): Promise<string[]> {
    const config = join(dir, `${topic}.yaml`);
    await writeFile(
      config,
      cliConfigYaml({
        source: source.bootstrapServers,
        target: central.bootstrapServers,
        whitelist: topic,
        sourceAlias: "idc1",
        sourceRequestTimeoutMs,
      }),
    );
    return ["--config", config, "--state-dir", join(dir, "state")];
  }

  /** Ten source records A-0..A-9, copied by one run, and a group that consumed 0..4 of them. */
  async function copiedWithGroup(topic: string, common: readonly string[]): Promise<string> {
    const records = Array.from({ length: 10 }, (_, i) => ({ key: null, value: Buffer.from(`A-${i}`) }));
    await kcatProduce({ brokers: source.bootstrapServers, topic, partition: 0, records });
    const run = await cli(["run", "--once", ...common]);
    assert.equal(run.code, 0, run.stderr);
    const group = `billing-${randomUUID().slice(0, 8)}`;
    await alterGroupOffsets(source.bootstrapServers, group, [`${topic}:0:5`]);
    return group;
  }

  /** The translation's target offset holds the copy of A-5, as a read_committed consumer reads it. */
  async function assertCopyOfFive(topic: string, stdout: string): Promise<void> {
    const [row] = JSON.parse(stdout).groups[0].partitions;
    assert.equal(row.translation.nextSourceOffset, 5, stdout);
    const [next] = await kcatRead({
      brokers: central.bootstrapServers,
      topic,
      partition: 0,
      fromOffset: row.translation.targetOffset,
      config: { "isolation.level": "read_committed" },
    });
    assert.equal(next?.value?.toString("latin1"), "A-5");
  }

  it("waits for it and translates exactly once it ends; names it when it outlasts the budget", async () => {
    // Prepare: another writer commits 2 records on the central topic (0-1, marker 2) and leaves
    // 2 more in an open transaction (3-4): the LSO is 3.
    const topic = `orders-${randomUUID().slice(0, 8)}`;
    await Promise.all([source, central].map((c) => c.createTopic(topic, 1)));
    const common = await configFor(topic, REQUEST_TIMEOUT_MS);
    const other = new ScriptedProducer(central.bootstrapServers, topic);
    try {
      await other.init();
      await other.transaction("other", 2, "commit");
      await other.run("begin");
      await other.run("produce open 2");
      // The mirror copies source 0..9 after it (a first run adopts the target's end unread), and
      // the group has consumed 0..4 on the source.
      const group = await copiedWithGroup(topic, common);
      const offsets = () => cli(["offsets", ...common, "--group", group, "--json"]);

      // Act 1: the transaction stays open for the whole budget.
      const started = Date.now();
      const stuck = await offsets();

      // Assess 1
      assert.equal(stuck.code, 1, stuck.stdout);
      assert.match(stuck.stderr, new RegExp(`target ${topic}/0 has an open transaction at offset 3: `));
      // --json: the failure is one JSON object (the last line), its code apart from the message.
      const failure = JSON.parse(stuck.stderr.trimEnd().split("\n").at(-1) ?? "") as {
        code?: string;
        error?: string;
      };
      assert.equal(failure.code, "TARGET_TRANSACTION_OPEN", stuck.stderr);
      assert.match(failure.error ?? "", /transaction\.timeout\.ms/);
      assert.ok(Date.now() - started >= 3 * REQUEST_TIMEOUT_MS - 500, "gave up before its budget");

      // Act 2: it ends (aborted) while the command waits.
      const pending = offsets();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await other.run("abort");
      const out = await pending;

      // Assess 2: the copy of source offset 5, where a read_committed consumer finds A-5.
      assert.equal(out.code, 0, out.stderr);
      await assertCopyOfFive(topic, out.stdout);
    } finally {
      await other.close().catch(() => other.kill());
    }
  });

  if (KAFKA_TESTBED === "real") {
    it("waits while the coordinator aborts the other writer's transaction on its timeout, then translates exactly", async () => {
      // Prepare: the other writer (kafkajs's transactional producer: txn-client's timeout is fixed
      // at 60 s) leaves 2 records in a transaction it never ends; our copies follow them.
      const topic = `refunds-${randomUUID().slice(0, 8)}`;
      await Promise.all([source, central].map((c) => c.createTopic(topic, 1)));
      const common = await configFor(topic, LONG_REQUEST_TIMEOUT_MS);
      const kafka = new Kafka({ brokers: central.bootstrapServers, logLevel: logLevel.NOTHING });
      const other = kafka.producer({
        transactionalId: `other-${randomUUID()}`,
        idempotent: true,
        maxInFlightRequests: 1,
        transactionTimeout: OTHER_TIMEOUT_MS,
      });
      await other.connect();
      try {
        const transaction = await other.transaction();
        await transaction.send({
          topic,
          acks: -1,
          messages: [0, 1].map((i) => ({ partition: 0, value: Buffer.from(`open-${i}`) })),
        });
        const opened = Date.now();
        const group = await copiedWithGroup(topic, common);
        const tp = { topic, partition: 0 };
        assert.equal(
          await openTransactionAt(central.bootstrapServers, tp),
          0,
          "still open when the command starts",
        );

        // Act
        const out = await cli(["offsets", ...common, "--group", group, "--json"]);

        // Assess: the answer came once the coordinator, not the writer, ended the transaction.
        assert.equal(out.code, 0, out.stderr);
        // The coordinator's clock starts at the first AddPartitionsToTxn, just before `opened`.
        const waited = Date.now() - opened;
        assert.ok(waited >= OTHER_TIMEOUT_MS - 1_000, `answered ${waited} ms after the transaction began`);
        assert.equal(await openTransactionAt(central.bootstrapServers, tp), null);
        await assertCopyOfFive(topic, out.stdout);
        const visible = await kcatRead({
          brokers: central.bootstrapServers,
          topic,
          partition: 0,
          config: { "isolation.level": "read_committed" },
        });
        assert.deepEqual(
          visible.map((r) => r.value?.toString("latin1")),
          Array.from({ length: 10 }, (_, i) => `A-${i}`),
          "the timed-out transaction was aborted, not committed",
        );
      } finally {
        await other.disconnect();
      }
    });
  }
});
