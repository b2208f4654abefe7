import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { testbedFromEnvironment } from "../../helpers/kafka-testbed.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");

/** scripts/contract-tests.mjs is plain JavaScript for the runner: loaded by path, typed here. */
async function lists(): Promise<{
  CONTRACT_TESTS: readonly string[];
  REAL_KAFKA_ONLY_TESTS: readonly string[];
}> {
  const url = pathToFileURL(join(ROOT, "scripts", "contract-tests.mjs")).href;
  return (await import(url)) as {
    CONTRACT_TESTS: readonly string[];
    REAL_KAFKA_ONLY_TESTS: readonly string[];
  };
}

async function contractTests(): Promise<readonly string[]> {
  return (await lists()).CONTRACT_TESTS;
}

function testFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return testFiles(path);
    return name.endsWith(".test.ts") ? [path] : [];
  });
}

/** A test file that starts its clusters through kafka-testbed.ts, directly or through a rig. */
const STARTS_TEST_KAFKA =
  /from "(\.\.?\/)+(helpers\/)?(kafka-testbed|secured-clusters)\.js"|from "\.\/mirror-rig\.js"/;

describe("KAFKA_TESTBED", () => {
  it("is the mock unless it says real, and nothing else is taken", () => {
    assert.equal(testbedFromEnvironment(undefined), "mock");
    assert.equal(testbedFromEnvironment(""), "mock");
    assert.equal(testbedFromEnvironment("mock"), "mock");
    assert.equal(testbedFromEnvironment("real"), "real");
    for (const typo of ["Real", "kafka", "true"]) {
      assert.throws(() => testbedFromEnvironment(typo), new RegExp(`"${typo}"`));
    }
  });
});

describe("the contract suite (scripts/contract-tests.mjs)", () => {
  it("lists existing test files, once each, that start their clusters through kafka-testbed.ts", async () => {
    const listed = await contractTests();

    assert.equal(new Set(listed).size, listed.length, "a file listed twice");
    for (const file of listed) {
      assert.ok(existsSync(join(ROOT, file)), `${file} does not exist`);
      assert.match(
        readFileSync(join(ROOT, file), "utf8"),
        STARTS_TEST_KAFKA,
        `${file} runs on the mock only`,
      );
    }
  });

  it("leaves out no test that can run on real Kafka", async () => {
    const listed = new Set(await contractTests());
    const testbedAware = testFiles("test").filter((file) =>
      /from "(\.\.?\/)+(helpers\/)?kafka-testbed\.js"|from "\.\/mirror-rig\.js"/.test(
        readFileSync(join(ROOT, file), "utf8"),
      ),
    );

    assert.deepEqual(
      testbedAware.filter((file) => !listed.has(file) && !file.startsWith("test/unit/")),
      [],
    );
  });

  it("lists every other test that starts real Kafka itself in REAL_KAFKA_ONLY_TESTS, for the real lane", async () => {
    const { CONTRACT_TESTS, REAL_KAFKA_ONLY_TESTS } = await lists();
    const contract = new Set(CONTRACT_TESTS);
    const startsRealKafka = testFiles("test").filter(
      (file) =>
        !file.startsWith("test/unit/") &&
        /\bstart(RealKafka|MirrorMaker2)\(|kind: "real"/.test(readFileSync(join(ROOT, file), "utf8")),
    );

    assert.deepEqual(
      [...REAL_KAFKA_ONLY_TESTS].sort(),
      startsRealKafka.filter((file) => !contract.has(file)).sort(),
      "REAL_KAFKA_ONLY_TESTS must list exactly the tests outside the contract suite that start real Kafka",
    );
  });
});
