/** The CLI's log lines: a time on every line; with json, the functions' Powertools keys. */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import { CliLogger } from "../../../lib/cli/cli-logger.js";

function captured(): {
  io: { stdout: PassThrough; stderr: PassThrough };
  out: () => string;
  err: () => string;
} {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  return { io: { stdout, stderr }, out: () => out, err: () => err };
}

const AT = Date.UTC(2026, 11, 2, 5, 4, 19, 123);

describe("CliLogger", () => {
  it("starts every text line with its ISO time and keeps the fields", () => {
    const { io, err, out } = captured();
    const logger = new CliLogger(io, { debug: false, now: () => AT });
    logger.warn("the whitelist selects no topic; nothing is copied", { why: "none" });
    logger.notice("w-1: 10 records copied", { records: 10 });
    logger.info("hidden without --debug");
    logger.close();
    assert.equal(
      err(),
      '2026-12-02T05:04:19.123Z [warn] the whitelist selects no topic; nothing is copied {"why":"none"}\n',
    );
    assert.equal(out(), "2026-12-02T05:04:19.123Z [info] w-1: 10 records copied\n");
  });

  it("writes one JSON object per line with level, message, timestamp, service and the fields", () => {
    const { io, err } = captured();
    const logger = new CliLogger(io, { debug: true, format: "json", now: () => AT });
    logger.error("fetch failed, retrying", {
      attempt: 9,
      error: new Error("connect ECONNREFUSED"),
      level: "x",
    });
    logger.debug("details");
    logger.close();
    const lines = err()
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines[0], {
      level: "ERROR",
      message: "fetch failed, retrying",
      timestamp: "2026-12-02T05:04:19.123Z",
      service: "kafka-mirror",
      attempt: 9,
      error: "Error: connect ECONNREFUSED",
    });
    assert.equal(lines[1]?.level, "DEBUG");
  });
});
