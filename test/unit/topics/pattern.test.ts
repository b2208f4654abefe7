import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileTopicPattern, type TopicMatcher } from "../../../lib/topics/pattern.js";

function reasonFor(pattern: string): string {
  const compiled = compileTopicPattern(pattern);
  assert.equal(compiled.ok, false, `expected "${pattern}" to be refused`);
  return compiled.ok ? "" : compiled.reason;
}

function regexFor(pattern: string): TopicMatcher {
  const compiled = compileTopicPattern(pattern);
  assert.ok(compiled.ok, `expected "${pattern}" to compile`);
  return compiled.matcher;
}

describe("compileTopicPattern", () => {
  it("gives the engine's reason for a syntax error", () => {
    assert.equal(reasonFor("BIN-("), 'invalid regular expression "BIN-(": Unterminated group');
  });

  it("cannot be escaped by a pattern that closes the anchoring group", () => {
    assert.match(reasonFor("a)|(b"), /^invalid regular expression/);
  });

  it("refuses Java-only inline flags instead of misreading them", () => {
    assert.match(reasonFor("(?i)orders"), /^invalid regular expression "\(\?i\)orders"/);
  });

  it('names inline flags as such, not as JavaScript\'s "Invalid group" (regression)', () => {
    assert.match(reasonFor("(?i)orders"), /inline flags \(\(\?i\)\) are Java\/Perl syntax/);
    assert.doesNotMatch(reasonFor("(?i)orders"), /Invalid group/);
  });

  it("refuses MirrorMaker 1's comma form and suggests the | spelling", () => {
    const reason = reasonFor("BIN-BI-TOPIC,PUSH-BI-TOPIC");

    assert.match(reason, /MirrorMaker 1/);
    assert.match(reason, /"BIN-BI-TOPIC\|PUSH-BI-TOPIC"$/);
  });

  it("accepts commas in quantifiers, character classes and escapes", () => {
    assert.equal(regexFor("a{1,3}").test("aaa"), true);
    assert.equal(regexFor("a{1,3}").test("aaaa"), false);
    assert.equal(regexFor("[,a]b").test("ab"), true);
    assert.equal(regexFor("x\\,y").test("x,y"), true);
  });

  it("suggests | only for commas outside quantifiers", () => {
    assert.match(reasonFor("a{1,2},b"), /"a\{1,2\}\|b"$/);
  });
});

describe("compileTopicPattern: RE2 semantics", () => {
  it("refuses backreferences, naming the pattern and the linear-time engine", () => {
    for (const pattern of ["(a)\\1", "(?<x>a)\\k<x>"]) {
      const reason = reasonFor(pattern);
      assert.ok(reason.startsWith(`invalid regular expression "${pattern}": backreferences`), reason);
      assert.match(reason, /RE2, a linear-time engine/);
    }
  });

  it("refuses lookahead and lookbehind, naming the pattern", () => {
    for (const pattern of ["(?=a)a", "(?!b)a", "(?<=a)b", "(?<!a)b"]) {
      const reason = reasonFor(pattern);
      assert.ok(reason.startsWith(`invalid regular expression "${pattern}": lookaround`), reason);
    }
  });

  // Node 20's V8 refuses `(?i:...)` itself, newer V8 accepts it, RE2 always does: refused either way.
  it("refuses inline flag groups that RE2 itself would accept", () => {
    assert.match(reasonFor("(?i:orders)"), /^invalid regular expression "\(\?i:orders\)": /);
    assert.match(reasonFor("(?-i:orders)"), /^invalid regular expression "\(\?-i:orders\)": /);
  });

  it("refuses JavaScript syntax RE2 has no meaning for, naming the pattern", () => {
    assert.match(reasonFor("\\u0041"), /^regular expression "\\u0041" is not supported: .*RE2/);
  });

  it("keeps JavaScript's meaning for ordinary patterns", () => {
    assert.equal(regexFor("(?<env>prod|dev)\\.orders").test("prod.orders"), true);
    assert.equal(regexFor("\\d{2}-[a-z]+").test("42-eu"), true);
    assert.equal(regexFor("\\d{2}-[a-z]+").test("42-EU"), false);
    assert.equal(regexFor("a.c").test("a\nc"), false);
  });

  // Issue 16: with a backtracking engine this pattern takes 176 ms on a 34-character name and x4
  // per two more characters, so one whitelist would hang every worker.
  it("matches the catastrophic ([A-Z]+-?)*-BI-TOPIC in well under a millisecond per name", () => {
    const matcher = regexFor("([A-Z]+-?)*-BI-TOPIC");
    // Shortest first, so a backtracking engine blows the budget after a few names, not hours.
    const names = Array.from({ length: 1_000 }, (_, i) =>
      "ABCDEFGHIJKLMNOPQRSTUVWXYZ".repeat(3).slice(0, 30 + (i % 31)),
    );
    names.sort((a, b) => a.length - b.length);
    const budgetMs = names.length * 1;

    const started = performance.now();
    let tested = 0;
    for (const name of names) {
      assert.equal(matcher.test(name), false);
      tested++;
      if (performance.now() - started > budgetMs) break;
    }
    const elapsed = performance.now() - started;

    assert.equal(tested, names.length, `gave up after ${tested} names in ${elapsed.toFixed(0)} ms`);
    assert.ok(elapsed / names.length < 1, `average ${(elapsed / names.length).toFixed(3)} ms per name`);
    assert.equal(matcher.test(`${"A".repeat(60)}-BI-TOPIC`), true);
  });
});
