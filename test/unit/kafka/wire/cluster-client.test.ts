/**
 * The cluster client's one re-route (`attempt`): which answers earn fresh metadata and a second
 * call, and that there is never a third. No broker: the metadata refresh is replaced by a counter.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KafkaClusterClient, needsReroute } from "../../../../lib/kafka/wire/cluster-client.js";
import { translateKafkajsError } from "../../../../lib/kafka/wire/connection.js";
import { KafkaErrorCode, KafkaPartitionError } from "../../../../lib/kafka/wire/error-codes.js";

function offlineClient(): { client: KafkaClusterClient; refreshes: () => number } {
  const client = new KafkaClusterClient({ brokers: ["127.0.0.1:1"] });
  let refreshes = 0;
  client.refreshMetadata = async () => {
    refreshes++;
  };
  return { client, refreshes: () => refreshes };
}

const EPOCH_CODES = [KafkaErrorCode.FENCED_LEADER_EPOCH, KafkaErrorCode.UNKNOWN_LEADER_EPOCH];

describe("needsReroute", () => {
  it("re-routes after either leader epoch answer (KIP-320), as after NOT_LEADER_OR_FOLLOWER", () => {
    for (const code of [KafkaErrorCode.NOT_LEADER_OR_FOLLOWER, ...EPOCH_CODES]) {
      assert.equal(needsReroute(new KafkaPartitionError(code)), true, `code ${code}`);
    }
  });

  it("does not re-route a refusal that fresh metadata cannot change", () => {
    assert.equal(needsReroute(new KafkaPartitionError(KafkaErrorCode.OFFSET_OUT_OF_RANGE)), false);
    assert.equal(needsReroute(new KafkaPartitionError(KafkaErrorCode.MESSAGE_TOO_LARGE)), false);
  });
});

describe("KafkaClusterClient.attempt", () => {
  for (const code of EPOCH_CODES) {
    const name = new KafkaPartitionError(code).message;

    it(`${name}: refreshes metadata, then calls once more`, async () => {
      // Prepare
      const { client, refreshes } = offlineClient();
      const answers: (KafkaPartitionError | "records")[] = [new KafkaPartitionError(code), "records"];
      let calls = 0;

      // Act
      const result = await client.attempt("fetch t/0", async () => {
        calls++;
        const next = answers.shift();
        if (next instanceof Error) throw next;
        return next;
      });

      // Assess
      assert.deepEqual([result, calls, refreshes()], ["records", 2, 1]);
    });

    it(`${name} twice: the second answer is the caller's, KAFKA_RETRIABLE once translated`, async () => {
      const { client, refreshes } = offlineClient();
      let calls = 0;

      const failure = await client
        .attempt("fetch t/0", async () => {
          calls++;
          throw new KafkaPartitionError(code);
        })
        .then(
          () => assert.fail("attempt resolved"),
          (error: unknown) => error,
        );

      assert.deepEqual([calls, refreshes()], [2, 1]);
      const translated = translateKafkajsError(failure, "fetch t/0");
      assert.equal(translated.code, "KAFKA_RETRIABLE");
      assert.equal(translated.retryable, true);
      assert.equal(translated.details.kafkaError, name);
    });
  }
});
