// The contract suite: the test files that state a guarantee and run against both brokers, the
// patched librdkafka mock and real Apache Kafka 4.1 (test/helpers/kafka-testbed.ts picks one by
// KAFKA_TESTBED). `npm test` runs every test on the mock, then these again on real Kafka
// (`node scripts/run-tests.mjs --contract --testbed=real`). TESTING.md says which claim each
// proves on which broker; test/unit/scripts/contract-tests.test.ts keeps this list honest.
// Ordered cheapest first, so a broken real-Kafka test bed shows within a minute.
export const CONTRACT_TESTS = [
  "test/integration/kafka/transactions.test.ts",
  "test/integration/kafka/read-transactional.test.ts",
  "test/integration/kafka/pass-through.test.ts",
  "test/integration/kafka/pass-through-crc.test.ts",
  "test/integration/kafka/held-fetch.test.ts",
  "test/integration/kafka/cluster-admin-configs.test.ts",
  "test/integration/exactly-once/target-position.test.ts",
  "test/integration/exactly-once/active-active.test.ts",
  "test/integration/exactly-once/retention-loss.test.ts",
  "test/integration/exactly-once/corrupt-source.test.ts",
  "test/integration/exactly-once/source-divergence.test.ts",
  "test/integration/cli/run-verify.test.ts",
  "test/integration/cli/topic-sync.test.ts",
  "test/integration/kafka/group-admin.test.ts",
  "test/integration/offsets/translate.test.ts",
  "test/integration/offsets/failover.test.ts",
  "test/integration/security/cli-secured.test.ts",
  "test/integration/exactly-once/frozen-writer.test.ts",
  "test/integration/exactly-once/chaos.test.ts",
  "test/integration/cli/demo.test.ts",
  "test/integration/replication.test.ts",
  "test/integration/testbed/fetch-wakeup.test.ts",
  "test/integration/testbed/msgset-find.test.ts",
  "test/integration/testbed/produce-crc.test.ts",
];

// Tests of real Apache Kafka alone (its launcher, MirrorMaker 2, what only a real broker does):
// they start real brokers whatever KAFKA_TESTBED says, so `npm test` runs them in the real-Kafka
// lane, not the mock's. test/unit/helpers/kafka-testbed.test.ts keeps this list honest too.
export const REAL_KAFKA_ONLY_TESTS = [
  "test/integration/testbed/real-kafka.test.ts",
  "test/integration/testbed/mirror-maker2.test.ts",
  "test/integration/real-kafka/transaction-bounds.test.ts",
  "test/integration/real-kafka/producer-id-change.test.ts",
  "test/integration/kafka/group-admin-real-kafka.test.ts",
  "test/integration/kafka/leader-epoch-real-kafka.test.ts",
  "test/integration/offsets/failover-real-kafka.test.ts",
];
