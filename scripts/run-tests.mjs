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
//   --both             what `npm test` runs: every test on the mock and, at the same time, the
//                      contract suite on real Kafka, as two lanes of one file at a time each. The
//                      tests mostly wait (lease expiry, broker start-up, polls), so two lanes on
//                      2 cores take little longer than the mock lane alone; one after the other
//                      they took over CI's 30 minutes. Each lane's lines carry its name.
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { CONTRACT_TESTS } from "./contract-tests.mjs";

const args = process.argv.slice(2);
if (args.includes("--both")) await runBothLanes(args.filter((a) => a !== "--both"));
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

/** Runs this script twice at once, on the mock and on real Kafka's contract suite; exits when both did. */
async function runBothLanes(rest) {
  const lanes = [
    { name: "mock", args: ["--testbed=mock", ...rest] },
    { name: "real", args: ["--contract", "--testbed=real", ...rest] },
  ];
  const startedAt = Date.now();
  const codes = await Promise.all(lanes.map((lane) => runLane(lane)));
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  const failed = lanes.filter((_, i) => codes[i] !== 0).map((lane) => lane.name);
  console.log(
    `run-tests: both lanes in ${seconds} s; ${failed.length === 0 ? "all passed" : `failed: ${failed.join(", ")}`}`,
  );
  process.exit(failed.length === 0 ? 0 : 1);
}

function runLane({ name, args: laneArgs }) {
  return new Promise((resolveLane) => {
    const child = spawn(process.execPath, [process.argv[1], ...laneArgs], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const prefix = (stream, out) => {
      let pending = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk) => {
        const lines = (pending + chunk).split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) out.write(`[${name}] ${line}\n`);
      });
      stream.on("end", () => pending !== "" && out.write(`[${name}] ${pending}\n`));
    };
    prefix(child.stdout, process.stdout);
    prefix(child.stderr, process.stderr);
    child.on("close", (code, signal) => resolveLane(code ?? (signal === null ? 1 : 128)));
  });
}
