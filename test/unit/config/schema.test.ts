import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  largestWriteGroups,
  leaseRequestTimeoutMs,
  parseConfig,
  writeMaxBytes,
} from "../../../lib/config/schema.js";
import { DEFAULT_SYNCED_CONFIGS } from "../../../lib/core/plan/config-sync.js";
import { isReplicatorError, type ReplicatorError } from "../../../lib/errors.js";

const minimal = () => ({
  source: { brokers: ["source-1:9092"] },
  target: { brokers: ["target-1:9092"] },
  topics: { whitelist: "BIN-BI-TOPIC|PUSH-BI-TOPIC" },
});

/** The CONFIG_INVALID error `input` is refused with. */
function refusal(input: unknown): ReplicatorError {
  try {
    parseConfig(input);
  } catch (error) {
    if (isReplicatorError(error, "CONFIG_INVALID")) return error;
    throw error;
  }
  assert.fail("expected the config to be refused");
}

/** Paths of the fields named in the refusal of `input`. */
function badPaths(input: unknown): string[] {
  const issues = refusal(input).details.issues as { path: string }[];
  return issues.map((issue) => issue.path);
}

describe("parseConfig: valid input", () => {
  it("takes target.fencing none and refuses anything but transactional or none, naming the value", () => {
    assert.equal(
      parseConfig({ ...minimal(), target: { brokers: "t:9092", fencing: "none" } }).target.fencing,
      "none",
    );
    const error = refusal({ ...minimal(), target: { brokers: "t:9092", fencing: "lease" } });
    assert.match(error.message, /target\.fencing/);
    assert.match(error.message, /transactional/);
  });

  it('takes target.copy "batches" only with what keeps it exact, naming each setting and its fix', () => {
    const batches = { brokers: "t:9092", copy: "batches" };
    assert.equal(parseConfig({ ...minimal(), target: batches }).target.copy, "batches");
    // A codec of its own recompresses each batch (codec/pass-through.ts): nothing to refuse.
    const recompressing = parseConfig({ ...minimal(), target: { ...batches, compression: "zstd" } });
    assert.equal(recompressing.target.compression, "zstd");
    const error = refusal({
      ...minimal(),
      target: { ...batches, fencing: "none", compression: "zstd", alias: "dc2" },
    });
    assert.deepEqual(
      (error.details.issues as { path: string }[]).map((i) => i.path),
      ["target.fencing", "target.alias"],
    );
    assert.match(error.message, /target\.fencing: must be "transactional", got "none"/);
    assert.match(error.message, /target\.alias: must be unset.*got "dc2"/);
    assert.deepEqual(badPaths({ ...minimal(), target: { brokers: "t:9092", copy: "bytes" } }), [
      "target.copy",
    ]);
  });

  it("parses the minimal config with every default", () => {
    const config = parseConfig(minimal());

    assert.deepEqual(config, {
      source: {
        brokers: ["source-1:9092"],
        alias: "source",
        clientId: "kafka-mirror",
        tls: false,
        connectionTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
      },
      target: {
        brokers: ["target-1:9092"],
        clientId: "kafka-mirror",
        tls: false,
        connectionTimeoutMs: 10_000,
        requestTimeoutMs: 15_000,
        compression: "none",
        copy: "records",
        fencing: "transactional",
        replicationFactor: -1,
        maxBatchBytes: 1024 * 1024,
        maxInFlightBatches: 5,
      },
      topics: {
        whitelist: "BIN-BI-TOPIC|PUSH-BI-TOPIC",
        rename: "identity",
        discoveryIntervalMs: 10_000,
        configSync: true,
        configSyncAllow: [...DEFAULT_SYNCED_CONFIGS],
        configSyncDeny: [],
      },
      groups: {},
      batch: { maxRecords: 10_000, maxBytes: 1024 * 1024, maxWaitMs: 500, readAheadBytes: 64 * 1024 * 1024 },
      leases: {
        table: "kafka-mirror-leases",
        durationMs: 60_000,
        renewIntervalMs: 10_000,
        rebalanceIntervalMs: 5_000,
        checkpointIntervalMs: 1_000,
        maxClaimsPerRound: 1_000,
      },
      worker: { startFrom: "earliest" },
      provenance: { enabled: true, header: "kafka-mirror.provenance" },
    });
  });

  it("accepts brokers as one comma-separated string, as env vars deliver them", () => {
    const config = parseConfig({ ...minimal(), source: { brokers: " a.example.com:9092, 10.0.0.7:9094 ," } });

    assert.deepEqual(config.source.brokers, ["a.example.com:9092", "10.0.0.7:9094"]);
  });

  it("accepts one batch in flight: a full fetch still fits the write margin in two rounds", () => {
    const config = parseConfig({ ...minimal(), target: { brokers: "t:9092", maxInFlightBatches: 1 } });

    assert.equal(largestWriteGroups(config), 2);
    assert.equal(config.target.maxInFlightBatches, 1);
  });

  it("lets a write take along fetches read ahead up to 4 MiB, no more than a full fetch's rounds allow", () => {
    const MIB = 1024 * 1024;
    const at = (batch: object, target: object = {}) =>
      writeMaxBytes(parseConfig({ ...minimal(), batch, target: { brokers: "t:9092", ...target } }));
    assert.equal(at({}), 4 * MIB, "defaults: 2 rounds x 5 in flight hold 5 target batches of 1 MiB");
    assert.equal(at({}, { maxInFlightBatches: 1 }), MIB, "2 rounds of 1: one full fetch only");
    assert.equal(at({ maxBytes: 8 * MIB }, { maxBatchBytes: 4 * MIB }), 8 * MIB, "never less than a fetch");
    assert.equal(at({ maxBytes: 256 * 1024 }, { maxBatchBytes: 128 * 1024 }), 640 * 1024);
  });

  it("accepts numbers and booleans in their string form", () => {
    const config = parseConfig({
      ...minimal(),
      target: { brokers: "t:9092", tls: "true", replicationFactor: "3" },
      batch: { maxWaitMs: "250" },
    });

    assert.equal(config.target.tls, true);
    assert.equal(config.target.replicationFactor, 3);
    assert.equal(config.batch.maxWaitMs, 250);
  });

  it("takes consumer-group patterns by the topic patterns' rules, and names a bad one", () => {
    const config = parseConfig({ ...minimal(), groups: { whitelist: "billing-.*|audit", blacklist: "" } });
    assert.equal(config.groups.whitelist, "billing-.*|audit");
    assert.equal(config.groups.blacklist, undefined);
    const message = refusal({ ...minimal(), groups: { whitelist: "(a)\\1" } }).message;
    assert.match(message, /groups\.whitelist: .*"\(a\)\\1"/);
    assert.deepEqual(badPaths({ ...minimal(), groups: { blacklist: "(?=x)" } }), ["groups.blacklist"]);
  });

  it("treats an empty pattern as absent, as an empty CloudFormation parameter means", () => {
    const config = parseConfig({ ...minimal(), topics: { whitelist: ".*", blacklist: "" } });

    assert.equal(config.topics.blacklist, undefined);
  });

  it("keeps the fields an operator sets", () => {
    const config = parseConfig({
      source: { brokers: "s:9092", alias: "eu-west-1" },
      target: { brokers: "t:9092", alias: "us-east-1", compression: "zstd" },
      topics: { whitelist: ".*", rename: "prefix" },
      leases: { table: "mirror.leases", durationMs: 60_000, renewIntervalMs: 20_000 },
      worker: { id: "worker-1", startFrom: "latest" },
    });

    assert.equal(config.source.alias, "eu-west-1");
    assert.equal(config.target.compression, "zstd");
    assert.equal(config.topics.rename, "prefix");
    assert.equal(config.leases.renewIntervalMs, 20_000);
    assert.equal(config.worker.startFrom, "latest");
  });
});

describe("leaseRequestTimeoutMs", () => {
  it("is 2 s by default, and shorter when renewals are frequent enough to need it", () => {
    assert.equal(leaseRequestTimeoutMs(parseConfig(minimal()).leases), 2_000);
    const frequent = parseConfig({ ...minimal(), leases: { durationMs: 60_000, renewIntervalMs: 1_000 } });
    assert.equal(leaseRequestTimeoutMs(frequent.leases), 333);
    const explicit = parseConfig({ ...minimal(), leases: { requestTimeoutMs: 4_000 } });
    assert.equal(leaseRequestTimeoutMs(explicit.leases), 4_000);
  });
});

describe("parseConfig: each malformed field is refused by name", () => {
  const cases: {
    name: string;
    patch: (c: ReturnType<typeof minimal>) => unknown;
    path: string;
    says: RegExp;
  }[] = [
    {
      name: "a non-object document",
      patch: () => "source=a:9092",
      path: "config",
      says: /expected an object/,
    },
    {
      name: "a missing target",
      patch: (c) => ({ source: c.source, topics: c.topics }),
      path: "target",
      says: /required/,
    },
    {
      name: "empty brokers",
      patch: (c) => ({ ...c, source: { brokers: [] } }),
      path: "source.brokers",
      says: /^expected at least one "host:port" broker, got \[\]$/,
    },
    {
      name: "an empty broker string",
      patch: (c) => ({ ...c, source: { brokers: "" } }),
      path: "source.brokers",
      says: /at least one/,
    },
    {
      name: "a broker of the wrong type",
      patch: (c) => ({ ...c, source: { brokers: 9092 } }),
      path: "source.brokers",
      says: /got 9092/,
    },
    {
      name: "a port out of range",
      patch: (c) => ({ ...c, target: { brokers: ["t:9092", "t:65536"] } }),
      path: "target.brokers[1]",
      says: /port 1-65535\), got "t:65536"/,
    },
    {
      name: "port zero",
      patch: (c) => ({ ...c, target: { brokers: "t:0" } }),
      path: "target.brokers[0]",
      says: /got "t:0"/,
    },
    {
      name: "a broker without a port",
      patch: (c) => ({ ...c, target: { brokers: "t" } }),
      path: "target.brokers[0]",
      says: /"host:port"/,
    },
    {
      name: "a broker with a scheme",
      patch: (c) => ({ ...c, target: { brokers: "SASL_SSL://t:9096" } }),
      path: "target.brokers[0]",
      says: /"host:port"/,
    },
    {
      name: "an unknown top-level key",
      patch: (c) => ({ ...c, sources: {} }),
      path: "sources",
      says: /unknown key; allowed: source, target, topics, groups, batch, leases, worker/,
    },
    {
      name: "an unknown nested key",
      patch: (c) => ({ ...c, topics: { whitelist: ".*", whiteList: ".*" } }),
      path: "topics.whiteList",
      says: /unknown key; allowed: whitelist, blacklist, rename/,
    },
    {
      name: "a bad compression",
      patch: (c) => ({ ...c, target: { ...c.target, compression: "brotli" } }),
      path: "target.compression",
      says: /^got "brotli", allowed: none, gzip, snappy, lz4, zstd$/,
    },
    {
      name: "a bad whitelist regex",
      patch: (c) => ({ ...c, topics: { whitelist: "BIN-(" } }),
      path: "topics.whitelist",
      says: /^invalid regular expression "BIN-\(": Unterminated group$/,
    },
    {
      name: "a bad blacklist regex",
      patch: (c) => ({ ...c, topics: { whitelist: ".*", blacklist: "[a-" } }),
      path: "topics.blacklist",
      says: /invalid regular expression "\[a-"/,
    },
    {
      name: "MirrorMaker 1's comma-separated whitelist",
      patch: (c) => ({ ...c, topics: { whitelist: "A,B" } }),
      path: "topics.whitelist",
      says: /"A\|B"/,
    },
    {
      name: "a whitelist of the wrong type",
      patch: (c) => ({ ...c, topics: { whitelist: ["A", "B"] } }),
      path: "topics.whitelist",
      says: /expected a regular expression string/,
    },
    {
      name: "a bad rename",
      patch: (c) => ({ ...c, topics: { whitelist: ".*", rename: "suffix" } }),
      path: "topics.rename",
      says: /got "suffix", allowed: identity, prefix/,
    },
    {
      name: "an alias with illegal characters",
      patch: (c) => ({ ...c, source: { ...c.source, alias: "eu west" } }),
      path: "source.alias",
      says: /\[a-zA-Z0-9._-\]/,
    },
    {
      name: "an alias in the reserved namespace",
      patch: (c) => ({ ...c, source: { ...c.source, alias: "kafka-mirror" } }),
      path: "source.alias",
      says: /reserved prefix/,
    },
    {
      name: "zero records per batch",
      patch: (c) => ({ ...c, batch: { maxRecords: 0 } }),
      path: "batch.maxRecords",
      says: /expected an integer from 1 to 1000000, got 0/,
    },
    {
      name: "more batches in flight than an idempotent producer keeps in order",
      patch: (c) => ({ ...c, target: { ...c.target, maxInFlightBatches: 6 } }),
      path: "target.maxInFlightBatches",
      says: /expected an integer from 1 to 5, got 6/,
    },
    {
      name: "a negative wait",
      patch: (c) => ({ ...c, batch: { maxWaitMs: -1 } }),
      path: "batch.maxWaitMs",
      says: /got -1/,
    },
    {
      name: "a fractional number",
      patch: (c) => ({ ...c, batch: { maxBytes: 1500.5 } }),
      path: "batch.maxBytes",
      says: /integer/,
    },
    {
      name: "a number as a non-numeric string",
      patch: (c) => ({ ...c, leases: { durationMs: "30s" } }),
      path: "leases.durationMs",
      says: /got "30s"/,
    },
    {
      name: "replication factor 0",
      patch: (c) => ({ ...c, target: { ...c.target, replicationFactor: 0 } }),
      path: "target.replicationFactor",
      says: /-1 \(broker default\)/,
    },
    {
      name: "replication factor -2",
      patch: (c) => ({ ...c, target: { ...c.target, replicationFactor: -2 } }),
      path: "target.replicationFactor",
      says: /got -2/,
    },
    {
      name: "a short DynamoDB table name",
      patch: (c) => ({ ...c, leases: { table: "ab" } }),
      path: "leases.table",
      says: /3 to 255 characters/,
    },
    {
      name: "a bad start position",
      patch: (c) => ({ ...c, worker: { startFrom: "beginning" } }),
      path: "worker.startFrom",
      says: /allowed: earliest, latest/,
    },
    {
      name: "a renewal interval of half the lease or more",
      patch: (c) => ({ ...c, leases: { durationMs: 100_000, renewIntervalMs: 50_000 } }),
      path: "leases.renewIntervalMs",
      says: /less than half of leases\.durationMs \(100000\), got 50000: one missed/,
    },
    {
      name: "a DynamoDB request timeout whose attempts do not fit in a renewal interval",
      patch: (c) => ({ ...c, leases: { renewIntervalMs: 3_000, requestTimeoutMs: 1_500 } }),
      path: "leases.requestTimeoutMs",
      says: /less than leases\.renewIntervalMs \(3000\) \/ 2 attempts, got 1500: a lease store call that hangs/,
    },
    {
      name: "a rebalance interval longer than a lease",
      patch: (c) => ({ ...c, leases: { rebalanceIntervalMs: 70_000 } }),
      path: "leases.rebalanceIntervalMs",
      says: /at most leases\.durationMs/,
    },
    {
      name: "a checkpoint interval as long as a lease",
      patch: (c) => ({ ...c, leases: { checkpointIntervalMs: 60_000 } }),
      path: "leases.checkpointIntervalMs",
      says: /less than leases\.durationMs \(60000\), got 60000: progress must reach the lease store/,
    },
    {
      name: "a request timeout no longer than the fetch wait",
      patch: (c) => ({ ...c, source: { ...c.source, requestTimeoutMs: 5_000 }, batch: { maxWaitMs: 5_000 } }),
      path: "source.requestTimeoutMs",
      says: /greater than batch\.maxWaitMs \(5000\)/,
    },
    {
      name: "a lease too short for a write to fit",
      patch: (c) => ({ ...c, target: { ...c.target, requestTimeoutMs: 30_000 } }),
      path: "leases.durationMs",
      says: /greater than leases\.renewIntervalMs \(10000\) \+ 2 x target\.requestTimeoutMs \(60000\), got 60000/,
    },
    {
      name: "a full fetch that needs more request rounds than a write is sure of",
      patch: (c) => ({ ...c, target: { ...c.target, maxBatchBytes: 64 * 1024, maxInFlightBatches: 2 } }),
      path: "batch.maxBytes",
      says: /target\.maxBatchBytes \(65536\) and target\.maxInFlightBatches \(2\), a full fetch of batch\.maxBytes \(1048576\) is written in up to 16 rounds of target\.requestTimeoutMs \(15000\), more than the 30000 ms/,
    },
    {
      name: "the same alias on both sides",
      patch: (c) => ({ ...c, source: { ...c.source, alias: "A" }, target: { ...c.target, alias: "A" } }),
      path: "target.alias",
      says: /must differ from source\.alias/,
    },
  ];

  for (const { name, patch, path, says } of cases) {
    it(`refuses ${name} at ${path}`, () => {
      const error = refusal(patch(minimal()));

      const issues = error.details.issues as { path: string; message: string }[];
      assert.deepEqual(
        issues.map((issue) => issue.path),
        [path],
      );
      assert.match(issues[0]?.message ?? "", says);
      assert.ok(error.message.startsWith(`invalid config: ${path}: `), error.message);
    });
  }
});

describe("parseConfig: several bad fields", () => {
  it("names every bad field in one error", () => {
    const paths = badPaths({
      source: { brokers: [] },
      target: { brokers: "t:9092", compression: "brotli", extra: true },
      topics: { whitelist: "BIN-(", rename: "upper" },
      batch: { maxRecords: -5 },
      leases: { table: "x" },
      unknown: 1,
    });

    assert.deepEqual(paths.toSorted(), [
      "batch.maxRecords",
      "leases.table",
      "source.brokers",
      "target.compression",
      "target.extra",
      "topics.rename",
      "topics.whitelist",
      "unknown",
    ]);
  });

  it("writes them all into the message in the operator's words", () => {
    const error = refusal({
      source: { brokers: [] },
      target: { brokers: "t:9092", compression: "brotli" },
      topics: { whitelist: ".*" },
    });

    assert.equal(
      error.message,
      'invalid config: source.brokers: expected at least one "host:port" broker, got []; ' +
        'target.compression: got "brotli", allowed: none, gzip, snappy, lz4, zstd',
    );
    assert.equal(error.retryable, false);
  });
});
