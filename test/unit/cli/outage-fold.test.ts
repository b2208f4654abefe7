/** The outage fold on a fake clock: one line per kind of failure, then one "recovered" line. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type FoldedLine, isTransientFailure, OutageFold } from "../../../lib/cli/outage-fold.js";
import { FakeClock } from "../../helpers/fake-clock.js";

function fold(clock: FakeClock): { fold: OutageFold; lines: FoldedLine[] } {
  const lines: FoldedLine[] = [];
  return { fold: new OutageFold({ now: () => clock.now(), emit: (l) => lines.push(l) }), lines };
}

const refused = (): FoldedLine => ({
  level: "error",
  message: "kafkajs: Connection error: connect ECONNREFUSED 127.0.0.1:9092",
  fields: { broker: "127.0.0.1:9092" },
});
const retried = (attempt: number): FoldedLine => ({
  level: "warn",
  message: "fetch failed, retrying",
  fields: { attempt, code: "KAFKA_RETRIABLE", error: "connect ECONNREFUSED" },
});

describe("OutageFold", () => {
  it("prints the first failure of each kind, counts the repeats, and says once that it recovered", () => {
    // Prepare
    const clock = new FakeClock(0, { autoAdvance: false });
    const { fold: f, lines } = fold(clock);

    // Act: 25 s of failures, one every 250 ms, two kinds
    for (let n = 0; n < 100; n++) {
      f.log(n % 2 === 0 ? refused() : retried(n));
      clock.advance(250);
    }
    f.healthy();

    // Assess
    assert.deepEqual(
      lines.map((l) => l.message),
      [
        "kafkajs: Connection error: connect ECONNREFUSED 127.0.0.1:9092",
        "fetch failed, retrying",
        "kafkajs: Connection error: connect ECONNREFUSED 127.0.0.1:9092: recovered after 25 s (100 failed attempts)",
      ],
    );
    assert.equal(lines[1]?.fields.error, "connect ECONNREFUSED", "the first line keeps its cause");
    assert.deepEqual(lines[2]?.fields, { seconds: 25, failedAttempts: 100 });
  });

  it("ends an outage after 10 s without a failure, dated to its last failure", () => {
    const clock = new FakeClock(0, { autoAdvance: false });
    const { fold: f, lines } = fold(clock);
    for (let n = 0; n < 4; n++) {
      f.log(retried(n));
      clock.advance(1_000);
    }

    clock.advance(5_000);
    f.tick();
    assert.equal(lines.length, 1, "5 s of quiet is not yet a recovery");
    clock.advance(5_000);
    f.tick();

    assert.equal(lines[1]?.message, "fetch failed: recovered after 3 s (4 failed attempts)");
  });

  it("reminds every minute of an outage that goes on", () => {
    const clock = new FakeClock(0, { autoAdvance: false });
    const { fold: f, lines } = fold(clock);
    for (let n = 0; n <= 130; n++) {
      f.log(retried(n));
      clock.advance(1_000);
    }
    assert.deepEqual(
      lines.map((l) => l.message),
      [
        "fetch failed, retrying",
        "still failing after 60 s (61 failed attempts)",
        "still failing after 120 s (121 failed attempts)",
      ],
    );
  });

  it("prints other warnings every time and says nothing of a single failure a retry fixed", () => {
    const clock = new FakeClock(0, { autoAdvance: false });
    const { fold: f, lines } = fold(clock);
    const empty: FoldedLine = {
      level: "warn",
      message: "the whitelist selects no topic; nothing is copied",
      fields: {},
    };
    f.log(empty);
    f.log(empty);
    f.log(retried(0));
    f.healthy();
    assert.deepEqual(
      lines.map((l) => l.message),
      [empty.message, empty.message, "fetch failed, retrying"],
    );
  });

  it("tells transient failures from other warnings", () => {
    assert.equal(isTransientFailure("kafkajs: Connection timeout"), true);
    assert.equal(isTransientFailure("list offsets failed, retrying"), true);
    assert.equal(isTransientFailure("lease renewal failed"), true);
    assert.equal(isTransientFailure("handing lease over failed; it will expire"), true);
    assert.equal(isTransientFailure("lease lost, partition stopped"), false);
  });
});
