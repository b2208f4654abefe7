#!/usr/bin/env node
// Runs the test files under the given folders (default: test/) with Node's own test runner and
// tsx for TypeScript. Node 20's --test cannot glob *.ts files itself, so we list them here.
// Integration tests start brokers and emulators of their own; running them one file at a time
// keeps a 2-core machine from timing them out.
//
// Options of ours (the other --options go to node --test):
//   --contract         the contract suite (scripts/contract-tests.mjs), with or after any paths
//   --testbed=mock|real  KAFKA_TESTBED for the tests: the broker the contract tests run against
//                      (an environment variable KAFKA_TESTBED works as well)
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { CONTRACT_TESTS } from "./contract-tests.mjs";

const args = process.argv.slice(2);
const ours = (a) => a === "--contract" || a.startsWith("--testbed=");
const roots = args.filter((a) => !a.startsWith("--"));
if (args.includes("--contract")) roots.push(...CONTRACT_TESTS);
const passthrough = args.filter((a) => a.startsWith("--") && !ours(a));
const testbed = args.find((a) => a.startsWith("--testbed="))?.slice("--testbed=".length);
if (testbed !== undefined && testbed !== "mock" && testbed !== "real") {
  console.error(`--testbed must be mock or real, not ${JSON.stringify(testbed)}`);
  process.exit(2);
}
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith(".test.ts")) files.push(path);
  }
}
for (const root of roots.length > 0 ? roots : ["test"]) {
  if (statSync(root).isDirectory()) walk(root);
  else files.push(root);
}
if (files.length === 0) {
  console.error(`no test files under ${roots.join(", ") || "test"}`);
  process.exit(1);
}
const env = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" };
if (testbed !== undefined) env.KAFKA_TESTBED = testbed;
const startedAt = Date.now();
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=1", "--test-reporter=spec", ...passthrough, ...files],
  { stdio: "inherit", env },
);
const seconds = Math.round((Date.now() - startedAt) / 1000);
console.log(`run-tests: ${files.length} file(s), KAFKA_TESTBED=${env.KAFKA_TESTBED || "mock"}, ${seconds} s`);
process.exit(result.status ?? 1);
