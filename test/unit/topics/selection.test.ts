import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../lib/errors.js";
import { MAX_TOPIC_NAME_LENGTH, RESERVED_TOPIC_PREFIX } from "../../../lib/topics/names.js";
import {
  createTopicSelector,
  selectTopics,
  type TopicSelectorOptions,
} from "../../../lib/topics/selection.js";

const identity = (options: Partial<TopicSelectorOptions>) =>
  createTopicSelector({ rename: "identity", sourceAlias: "src", ...options });

const selectedNames = (options: Partial<TopicSelectorOptions>, topics: string[]) =>
  selectTopics(identity(options), topics).selected.map((s) => s.source);

describe("createTopicSelector: whitelist", () => {
  it("selects exactly the topics of MirrorMaker's alternation example", () => {
    const topics = ["BIN-BI-TOPIC", "PUSH-BI-TOPIC", "SCRIPT-BI-TOPIC", "OTHER-BI-TOPIC", "BIN-BI-TOPIC-2"];

    const selected = selectedNames({ whitelist: "BIN-BI-TOPIC|PUSH-BI-TOPIC|SCRIPT-BI-TOPIC" }, topics);

    assert.deepEqual(selected, ["BIN-BI-TOPIC", "PUSH-BI-TOPIC", "SCRIPT-BI-TOPIC"]);
  });

  it("selects every ordinary topic with .*", () => {
    const selected = selectedNames({ whitelist: ".*" }, ["orders", "a.b-c_d", "X"]);

    assert.deepEqual(selected, ["X", "a.b-c_d", "orders"]);
  });

  it("matches the whole name: BIN does not select BIN-BI-TOPIC", () => {
    const mapping = identity({ whitelist: "BIN" });

    assert.equal(mapping.isSelected("BIN-BI-TOPIC"), false);
    assert.equal(mapping.isSelected("xBIN"), false);
    assert.equal(mapping.isSelected("BIN"), true);
  });

  // `^A|B$` would read as `(^A)|(B$)` and select `Ax` and `xB`.
  it("anchors every alternative: A|B selects none of xA, Ax, xB, Bx", () => {
    const mapping = identity({ whitelist: "A|B" });

    for (const topic of ["xA", "Ax", "xB", "Bx"]) assert.equal(mapping.isSelected(topic), false, topic);
    assert.equal(mapping.isSelected("A"), true);
    assert.equal(mapping.isSelected("B"), true);
  });

  it("selects nothing without a whitelist", () => {
    const result = selectTopics(identity({}), ["orders"]);

    assert.deepEqual(result.selected, []);
    assert.deepEqual(
      result.skipped.map((s) => s.reason),
      ["not-whitelisted"],
    );
  });

  it("refuses an invalid pattern with PATTERN_INVALID naming the field", () => {
    assert.throws(
      () => identity({ whitelist: "BIN-(" }),
      (error) =>
        isReplicatorError(error, "PATTERN_INVALID") &&
        /topics\.whitelist: invalid regular expression "BIN-\(": Unterminated group/.test(error.message),
    );
  });
});

describe("createTopicSelector: blacklist and never-selected topics", () => {
  it("lets the blacklist win over the whitelist", () => {
    const mapping = identity({ whitelist: "orders.*", blacklist: "orders-private" });

    assert.equal(mapping.isSelected("orders-public"), true);
    assert.equal(mapping.isSelected("orders-private"), false);
    assert.deepEqual(mapping.decide("orders-private"), {
      selected: false,
      topic: "orders-private",
      reason: "blacklisted",
      message: "matches the blacklist",
    });
  });

  it("matches the blacklist as a whole name too", () => {
    const mapping = identity({ whitelist: ".*", blacklist: "tmp" });

    assert.equal(mapping.isSelected("tmp-orders"), true);
    assert.equal(mapping.isSelected("tmp"), false);
  });

  it("never selects Kafka internal topics, even with .*", () => {
    const internal = [
      "__consumer_offsets",
      "__transaction_state",
      "__cluster_metadata",
      "__amazon_msk_canary",
    ];

    const result = selectTopics(identity({ whitelist: ".*" }), [...internal, "orders"]);

    assert.deepEqual(
      result.selected.map((s) => s.source),
      ["orders"],
    );
    assert.deepEqual(
      result.skipped.map((s) => [s.topic, s.reason]),
      [...internal].sort().map((t) => [t, "internal"]),
    );
  });

  it("never selects an internal topic named explicitly in the whitelist", () => {
    assert.equal(identity({ whitelist: "__consumer_offsets" }).isSelected("__consumer_offsets"), false);
  });

  it("never selects kafka-mirror's own topics", () => {
    const own = `${RESERVED_TOPIC_PREFIX}heartbeats`;

    const decision = identity({ whitelist: ".*" }).decide(own);

    assert.equal(decision.selected, false);
    assert.equal(decision.selected === false && decision.reason, "reserved");
  });
});

describe("createTopicSelector: rename", () => {
  it("keeps the name with identity", () => {
    assert.equal(identity({ whitelist: ".*" }).targetTopic("orders"), "orders");
  });

  it("prefixes the source alias with prefix", () => {
    const mapping = createTopicSelector({ whitelist: ".*", rename: "prefix", sourceAlias: "eu-west" });

    assert.equal(mapping.targetTopic("orders"), "eu-west.orders");
  });

  it("skips a topic that already carries the source alias instead of prefixing it again", () => {
    const mapping = createTopicSelector({ whitelist: ".*", rename: "prefix", sourceAlias: "A" });

    const result = selectTopics(mapping, ["A.orders", "B.A.orders", "orders", "Ab.orders"]);

    assert.deepEqual(result.selected, [
      { source: "Ab.orders", target: "A.Ab.orders" },
      { source: "orders", target: "A.orders" },
    ]);
    assert.deepEqual(
      result.skipped.map((s) => [s.topic, s.reason]),
      [
        ["A.orders", "cycle"],
        ["B.A.orders", "cycle"],
      ],
    );
  });

  it("skips copies of the target cluster so active-active pairs do not loop", () => {
    const mapping = createTopicSelector({
      whitelist: ".*",
      rename: "prefix",
      sourceAlias: "B",
      targetAlias: "A",
    });

    assert.equal(mapping.isSelected("A.orders"), false);
    assert.equal(mapping.isSelected("orders"), true);
  });

  it("does not read provenance into names with identity rename", () => {
    const mapping = createTopicSelector({
      whitelist: ".*",
      rename: "identity",
      sourceAlias: "A",
      targetAlias: "B",
    });

    assert.equal(mapping.targetTopic("A.orders"), "A.orders");
    assert.equal(mapping.targetTopic("B.orders"), "B.orders");
  });

  it("reports a topic whose prefixed name would exceed Kafka's limit instead of truncating it", () => {
    const longest = "t".repeat(MAX_TOPIC_NAME_LENGTH);
    const fits = "f".repeat(MAX_TOPIC_NAME_LENGTH - "src.".length);
    const mapping = createTopicSelector({ whitelist: ".*", rename: "prefix", sourceAlias: "src" });

    const result = selectTopics(mapping, [longest, fits]);

    assert.deepEqual(result.selected, [{ source: fits, target: `src.${fits}` }]);
    assert.equal(result.skipped.length, 1);
    assert.equal(result.skipped[0]?.topic, longest);
    assert.equal(result.skipped[0]?.reason, "invalid-target-name");
    assert.match(result.skipped[0]?.message ?? "", /253 characters long, Kafka allows at most 249/);
  });

  it("throws CONFIG_INVALID when asked for the target of a skipped topic", () => {
    const mapping = createTopicSelector({ whitelist: ".*", rename: "prefix", sourceAlias: "src" });
    const longest = "t".repeat(MAX_TOPIC_NAME_LENGTH);

    assert.throws(
      () => mapping.targetTopic(longest),
      (error) => isReplicatorError(error, "CONFIG_INVALID") && error.details.reason === "invalid-target-name",
    );
    assert.throws(
      () => mapping.targetTopic("__consumer_offsets"),
      (error) => isReplicatorError(error, "CONFIG_INVALID") && error.details.reason === "internal",
    );
  });

  it("refuses a target name in kafka-mirror's reserved namespace", () => {
    const mapping = createTopicSelector({ whitelist: ".*", rename: "prefix", sourceAlias: "kafka-mirror" });

    const decision = mapping.decide("orders");

    assert.equal(decision.selected === false && decision.reason, "invalid-target-name");
  });
});

describe("selectTopics", () => {
  it("sorts by code unit, drops duplicates and keeps every topic in exactly one list", () => {
    const mapping = identity({ whitelist: "[a-z].*|Z", blacklist: "b" });

    const result = selectTopics(mapping, ["c", "a", "Z", "b", "a", "__x", "9"]);

    assert.deepEqual(result.selected, [
      { source: "Z", target: "Z" },
      { source: "a", target: "a" },
      { source: "c", target: "c" },
    ]);
    assert.deepEqual(
      result.skipped.map((s) => [s.topic, s.reason]),
      [
        ["9", "not-whitelisted"],
        ["__x", "internal"],
        ["b", "blacklisted"],
      ],
    );
  });
});

describe("createTopicSelector: why nothing is selected", () => {
  it("counts the source's topics and names near misses: letter case, a prefix, a part of the name", () => {
    const mapping = identity({ whitelist: "ORDERS|nomatch.*" });
    const topics = ["orders", "ORDERS-v2", "eu.ORDERS", "payments", "__consumer_offsets"];

    const why = mapping.whyNothingSelected(topics);

    assert.match(
      why,
      /^topics\.whitelist "ORDERS\|nomatch\.\*" selects none of the 4 topic\(s\) on the source/,
    );
    assert.match(why, /"orders" \(differs in letter case\)/);
    assert.match(why, /"ORDERS-v2" \(matches only its beginning\)/);
    assert.match(why, /"eu\.ORDERS" \(matches only part of the name\)/);
    assert.doesNotMatch(why, /payments|__consumer_offsets/);
  });

  it("says what the blacklist took, and gives examples when nothing is close", () => {
    const why = identity({ whitelist: "a.*", blacklist: "a.*" }).whyNothingSelected(["ab", "ac", "zz"]);

    assert.match(why, /skipped: 2 blacklisted/);
    assert.match(why, /near misses: "ab"/);
    assert.match(
      identity({ whitelist: "logs" }).whyNothingSelected(["x", "y"]),
      /selects none of the 2 topic\(s\) on the source; e\.g\. "x", "y"$/,
    );
  });
});
