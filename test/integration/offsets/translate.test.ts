/**
 * Offset translation through the real CLI (`kafka-mirror offsets`) and adapters, on a target
 * partition where another writer (librdkafka's own transactional producer, txn-client's script
 * mode) holds a transaction open below our copies: READ_COMMITTED stops at its start (the LSO),
 * our copies lie beyond it. While it stays open the command fails after its retry budget,
 * naming the transaction; once it ends during the wait, the translation is the exact copy.
 * Regression: the translation stopped at the LSO and answered it, "the next record copied".
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { stopLeaseServer } from "../../../lib/embedded/ensure.js";
import { runCliCaptured as cli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { runGroupClient } from "../../helpers/group-client.js";
import { kcatProduce, kcatRead } from "../../helpers/kcat.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { ScriptedProducer } from "../../helpers/txn-script.js";

/** Both sides' request timeout: the command retries one call (and waits) for 3 of them. */
const REQUEST_TIMEOUT_MS = 2_000;

describe("kafka-mirror offsets with another writer's transaction open on the target", () => {
  let source: MockKafka;
  let central: MockKafka;
  let dir: string;

  before(async () => {
    [source, central] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-translate-"));
  });

  after(async () => {
    await stopLeaseServer(join(dir, "state")).catch(() => {});
    await Promise.allSettled([source?.stop(), central?.stop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("waits for it and translates exactly once it ends; names it when it outlasts the budget", async () => {
    // Prepare: another writer commits 2 records on the central topic (0-1, marker 2) and leaves
    // 2 more in an open transaction (3-4): the LSO is 3.
    const topic = `orders-${randomUUID().slice(0, 8)}`;
    await Promise.all([source, central].map((c) => c.createTopic(topic, 1)));
    const config = join(dir, "mirror.yaml");
    await writeFile(
      config,
      cliConfigYaml({
        source: source.bootstrapServers,
        target: central.bootstrapServers,
        whitelist: topic,
        sourceAlias: "idc1",
        sourceRequestTimeoutMs: REQUEST_TIMEOUT_MS,
      }),
    );
    const common = ["--config", config, "--state-dir", join(dir, "state")];
    const other = new ScriptedProducer(central.bootstrapServers, topic);
    try {
      await other.init();
      await other.transaction("other", 2, "commit");
      await other.run("begin");
      await other.run("produce open 2");
      // The mirror copies source 0..9 after it (a first run adopts the target's end unread), and
      // the group has consumed 0..4 on the source.
      const records = Array.from({ length: 10 }, (_, i) => ({ key: null, value: Buffer.from(`A-${i}`) }));
      await kcatProduce({ brokers: source.bootstrapServers, topic, partition: 0, records });
      const run = await cli(["run", "--once", ...common]);
      assert.equal(run.code, 0, run.stderr);
      const group = `billing-${randomUUID().slice(0, 8)}`;
      await runGroupClient("alter", source.bootstrapServers, [group, `${topic}:0:5`]);
      const offsets = () => cli(["offsets", ...common, "--group", group, "--json"]);

      // Act 1: the transaction stays open for the whole budget.
      const started = Date.now();
      const stuck = await offsets();

      // Assess 1
      assert.equal(stuck.code, 1, stuck.stdout);
      assert.match(stuck.stderr, new RegExp(`target ${topic}/0 has an open transaction at offset 3: `));
      assert.match(stuck.stderr, /transaction\.timeout\.ms.*\[TARGET_TRANSACTION_OPEN\]/);
      assert.ok(Date.now() - started >= 3 * REQUEST_TIMEOUT_MS - 500, "gave up before its budget");

      // Act 2: it ends (aborted) while the command waits.
      const pending = offsets();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await other.run("abort");
      const out = await pending;

      // Assess 2: the copy of source offset 5, where a read_committed consumer finds A-5.
      assert.equal(out.code, 0, out.stderr);
      const [row] = JSON.parse(out.stdout).groups[0].partitions;
      assert.equal(row.translation.nextSourceOffset, 5, out.stdout);
      const [next] = await kcatRead({
        brokers: central.bootstrapServers,
        topic,
        partition: 0,
        fromOffset: row.translation.targetOffset,
        config: { "isolation.level": "read_committed" },
      });
      assert.equal(next?.value?.toString("latin1"), "A-5");
    } finally {
      await other.close().catch(() => other.kill());
    }
  });
});
