import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isProcessAlive, type ProcessProbe } from "../../../../lib/dynamodb/embedded/server-file.js";

const failingWith =
  (code: string): ProcessProbe =>
  () => {
    throw Object.assign(new Error(`kill: ${code}`), { code });
  };

describe("isProcessAlive", () => {
  it("is true when signal 0 reaches the process", () => {
    assert.equal(
      isProcessAlive(4242, () => {}),
      true,
    );
  });

  it("is false when no such process exists (ESRCH)", () => {
    assert.equal(isProcessAlive(4242, failingWith("ESRCH")), false);
  });

  // Our server runs as us: a pid that belongs to another user is a reused pid, not our server.
  it("is false when the process belongs to another user (EPERM)", () => {
    assert.equal(isProcessAlive(4242, failingWith("EPERM")), false);
  });

  it("probes with signal 0 by default: this process is alive", () => {
    assert.equal(isProcessAlive(process.pid), true);
  });
});
