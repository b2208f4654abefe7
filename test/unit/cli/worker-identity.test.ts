import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { claimWorkerIdentity, markOf } from "../../../lib/cli/worker-identity.js";

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

describe("claimWorkerIdentity", () => {
  let root: string;
  let n = 0;
  const stateDir = async (): Promise<string> => {
    const dir = join(root, `state-${n++}`);
    await mkdir(dir);
    return dir;
  };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "kafka-mirror-identity-"));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("takes slot 0 of a new state directory, with a worker id per run and no former self", async () => {
    const dir = await stateDir();
    const identity = await claimWorkerIdentity(dir, false);
    assert.equal(identity.slot, `${hostname()}-w0`);
    assert.match(identity.workerId, new RegExp(`^${identity.slot}~[0-9a-f]{8}$`));
    assert.equal(identity.formerSelf(identity.workerId), false);
    assert.equal(identity.formerSelf(`${identity.slot}~whatever`), false);
  });

  it("after a run that died, takes its slot and names exactly its dead runs as former selves", async () => {
    const dir = await stateDir();
    await mkdir(join(dir, "workers"));
    await writeFile(
      join(dir, "workers", "w0.pid"),
      JSON.stringify({ pid: deadPid(), tokens: ["dead2", "dead1"] }),
    );

    const identity = await claimWorkerIdentity(dir, false);

    assert.equal(identity.slot, `${hostname()}-w0`);
    for (const owner of [`${identity.slot}~dead2`, `${identity.slot}~dead1.3`])
      assert.equal(identity.formerSelf(owner), true, owner);
    for (const owner of [
      identity.workerId,
      `${identity.workerId}.1`,
      `${identity.slot}~other`,
      "elsewhere-w0~dead2",
    ])
      assert.equal(identity.formerSelf(owner), false, owner);
    const file = JSON.parse(await readFile(join(dir, "workers", "w0.pid"), "utf8")) as { tokens: string[] };
    assert.deepEqual(file.tokens, [identity.workerId.split("~")[1], "dead2", "dead1"]);
  });

  it("never gives a slot a live process has: runs started at once get different slots", async () => {
    const dir = await stateDir();
    const identities = await Promise.all(Array.from({ length: 5 }, () => claimWorkerIdentity(dir, false)));
    assert.deepEqual(
      identities.map((i) => i.slot).sort(),
      [0, 1, 2, 3, 4].map((k) => `${hostname()}-w${k}`),
    );
    for (const a of identities)
      for (const b of identities)
        assert.equal(a.formerSelf(b.workerId), false, "a live run is nobody's former self");
  });

  it("removes a choose lock left by a process that died while choosing", async () => {
    const dir = await stateDir();
    await mkdir(join(dir, "workers"));
    await writeFile(join(dir, "workers", "choose.lock"), String(deadPid()));
    const identity = await claimWorkerIdentity(dir, false);
    assert.equal(identity.slot, `${hostname()}-w0`);
  });

  it("names the state directory in the slot when the lease table is shared (DynamoDB)", async () => {
    const identity = await claimWorkerIdentity(await stateDir(), true);
    assert.match(identity.slot, new RegExp(`^${hostname()}-[0-9a-f]{6}-w0$`));
  });
  it("takes the slot of a reused pid (the same pid, another start time: a restarted container's pid 1)", async () => {
    const dir = await stateDir();
    await mkdir(join(dir, "workers"));
    const me = await markOf(process.pid);
    assert.ok(me.start !== undefined, "this test needs Linux's /proc");
    const earlier = String(Number(me.start) - 1);
    await writeFile(
      join(dir, "workers", "w0.pid"),
      JSON.stringify({ ...me, start: earlier, tokens: ["gone"] }),
    );

    const identity = await claimWorkerIdentity(dir, false);

    assert.equal(identity.slot, `${hostname()}-w0`);
    assert.equal(identity.formerSelf(`${identity.slot}~gone`), true);
  });

  it("never takes a slot held in another pid namespace, whatever its pid says here", async () => {
    const dir = await stateDir();
    await mkdir(join(dir, "workers"));
    const me = await markOf(process.pid);
    assert.ok(me.ns !== undefined, "this test needs Linux's /proc");
    // A dead pid here, but a process of another container sharing the volume and the hostname.
    const other = { pid: deadPid(), ns: "pid:[1]", boot: me.boot, tokens: ["live-elsewhere"] };
    await writeFile(join(dir, "workers", "w0.pid"), JSON.stringify(other));

    const identity = await claimWorkerIdentity(dir, false);

    assert.equal(identity.slot, `${hostname()}-w1`);
    assert.equal(identity.formerSelf(`${hostname()}-w0~live-elsewhere`), false);
  });
});
