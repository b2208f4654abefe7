import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileTopicPattern } from "../../../lib/topics/pattern.js";

function reasonFor(pattern: string): string {
  const compiled = compileTopicPattern(pattern);
  assert.equal(compiled.ok, false, `expected "${pattern}" to be refused`);
  return compiled.ok ? "" : compiled.reason;
}

function regexFor(pattern: string): RegExp {
  const compiled = compileTopicPattern(pattern);
  assert.ok(compiled.ok, `expected "${pattern}" to compile`);
  return compiled.regex;
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
