import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { isReplicatorError } from "../../../../lib/errors.js";
import {
  CRC32C_VARIABLE,
  chooseCrc32c,
  crc32c,
  crc32cImplementation,
  loadNativeCrc32c,
  NATIVE_CRC32C_PACKAGE,
} from "../../../../lib/kafka/codec/crc32c.js";
import { jsCrc32c } from "../../../../lib/kafka/codec/crc32c-js.js";

const MODULE = fileURLToPath(new URL("../../../../lib/kafka/codec/crc32c.ts", import.meta.url));

/** The native implementation; this test file's machines all have a binary of @node-rs/crc32. */
function native() {
  const loaded = loadNativeCrc32c();
  if (loaded instanceof Error) assert.fail(`@node-rs/crc32 did not load: ${loaded.message}`);
  return loaded;
}

/** What `crc32cImplementation()` says in a fresh process with `value` in KAFKA_MIRROR_CRC32C. */
function implementationInProcessWith(value: string | undefined): string {
  const env = { ...process.env };
  delete env[CRC32C_VARIABLE];
  if (value !== undefined) env[CRC32C_VARIABLE] = value;
  const script = `const m = await import(${JSON.stringify(MODULE)}); console.log(m.crc32cImplementation());`;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    env,
    encoding: "utf8",
  });
  assert.equal(child.status, 0, child.stderr);
  return child.stdout.trim();
}

describe("crc32c", () => {
  it("is the native implementation on this machine, unless KAFKA_MIRROR_CRC32C=js", () => {
    // npm installs @node-rs/crc32's binary for the platforms we develop and test on (linux x64 and
    // arm64, macOS): "js" here means the lockfile lost it, and every agreement below compares the
    // JavaScript implementation with itself.
    const expected = process.env[CRC32C_VARIABLE] === "js" ? "js" : "native";
    assert.equal(crc32cImplementation(), expected);
  });

  it("requires a production dependency, so the installed CLI package has it", () => {
    // esbuild never sees a createRequire'd name, so scripts/build.mjs's check of the bundle's
    // imports against `dependencies` cannot catch this one.
    const pkg = JSON.parse(readFileSync(new URL("../../../../package.json", import.meta.url), "utf8")) as {
      dependencies: Record<string, string>;
    };
    assert.ok(NATIVE_CRC32C_PACKAGE in pkg.dependencies, `${NATIVE_CRC32C_PACKAGE} in dependencies`);
  });

  it("matches the published check value in both implementations", () => {
    const check = Buffer.from("123456789", "latin1");
    assert.equal(crc32c(check), 0xe3069283);
    assert.equal(native()(check), 0xe3069283);
    assert.equal(jsCrc32c(check), 0xe3069283);
  });

  it("gives the same answer in both implementations for every length 0..4096 at every offset 0..7", () => {
    // Prepare: a view 5 bytes into its memory (as a batch lies inside a fetch response); each
    // range starts at an offset that moves the JavaScript word loop's alignment and the native
    // loop's 8-byte split.
    const data = randomBytes(4096 + 16).subarray(5);
    const nativeCrc32c = native();

    // Act / Assess
    for (let offset = 0; offset < 8; offset++) {
      for (let length = 0; length <= 4096; length++) {
        const end = offset + length;
        const expected = jsCrc32c(data, offset, end);
        if (nativeCrc32c(data, offset, end) !== expected) {
          assert.fail(`offset ${offset}, length ${length}: native differs from js`);
        }
      }
    }
  });

  it("sums the whole view by default and a view of a larger buffer at its own offset", () => {
    const backing = randomBytes(1000);
    const view = backing.subarray(13, 987);
    assert.equal(native()(view), jsCrc32c(view));
    assert.equal(native()(view, 5, 900), jsCrc32c(backing, 18, 913));
    assert.equal(native()(view, 7, 7), 0);
  });
});

describe("chooseCrc32c", () => {
  const fake = () => 42;

  it("takes the native implementation when it loads and the variable is unset or empty", () => {
    for (const setting of [undefined, ""]) {
      const choice = chooseCrc32c(setting, () => fake);
      assert.equal(choice.implementation, "native");
      assert.equal(choice.crc32c, fake);
    }
  });

  it("takes the JavaScript implementation for js, without loading the native one", () => {
    let loads = 0;
    const choice = chooseCrc32c("js", () => {
      loads++;
      return fake;
    });
    assert.equal(choice.implementation, "js");
    assert.equal(choice.crc32c, jsCrc32c);
    assert.equal(choice.reason, "KAFKA_MIRROR_CRC32C=js");
    assert.equal(loads, 0);
  });

  it("falls back to the JavaScript implementation and says why when the native one does not load", () => {
    const choice = chooseCrc32c(undefined, () => new Error("Cannot find native binding.\nmore"));
    assert.equal(choice.implementation, "js");
    assert.equal(choice.crc32c, jsCrc32c);
    assert.equal(choice.reason, "@node-rs/crc32 did not load: Cannot find native binding.");
  });

  it("refuses any other value, naming the variable", () => {
    for (const setting of ["JS", "native", "javascript"]) {
      assert.throws(
        () => chooseCrc32c(setting, () => fake),
        (error) => isReplicatorError(error, "CONFIG_INVALID") && /KAFKA_MIRROR_CRC32C/.test(error.message),
        setting,
      );
    }
  });

  it("is made from the process's KAFKA_MIRROR_CRC32C when the module loads", () => {
    assert.equal(implementationInProcessWith("js"), "js");
    assert.equal(implementationInProcessWith(undefined), "native");
  });
});
