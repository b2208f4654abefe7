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
//                      contract suite on real Kafka, as two lanes of one file at a time each (the
//                      real lane then runs the real-Kafka-only files and the unit tests, see
//                      runBothLanes). The tests mostly
//                      wait (lease expiry, broker start-up, polls), so two lanes on 2 cores take
//                      little longer than the mock lane alone; one after the other they took over
//                      CI's 30 minutes. Each step's lines carry its name: [mock], [real], [unit].
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { CONTRACT_TESTS, REAL_KAFKA_ONLY_TESTS } from "./contract-tests.mjs";

/**
 * A file still running after this is stuck (a test or hook that never returns): killed and
 * failed with its name, instead of holding the run until CI's limit. The slowest file takes about
 * 2 minutes alone and 5 under load.
 */
const FILE_TIMEOUT_MS = 15 * 60_000;

// Before the --both dispatch below, which uses them (a const is not there until its line ran).
/** Lines of the lanes' output that say what failed, repeated at the end (at most MAX_FAILURE_LINES). */
const failureLines = [];
const MAX_FAILURE_LINES = 120;
/** Lines kept after a ✖ line: the assertion's message and where it was raised. */
const LINES_AFTER_FAILURE = 8;

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
const files = (roots.length > 0 ? roots : ["test"]).flatMap((root) =>
  statSync(root).isDirectory() ? testFilesUnder(root) : [root],
);
if (files.length === 0) {
  console.error(`no test files under ${roots.join(", ") || "test"}`);
  process.exit(1);
}
const env = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" };
if (testbed !== undefined) env.KAFKA_TESTBED = testbed;
// Answer buffers given back are overwritten (lib/kafka/wire/answer-pool.ts): a batch read after
// its buffer came back then fails its CRC at the target and differs from its source.
env.KAFKA_MIRROR_ANSWER_POOL ||= "poison";
// Each file runs as a plain process with the runner's reporter, not under `node --test`: that
// parent waits until every holder of the file's output pipe has gone, so a process a test
// started and left behind (a broker, a server) kept the run waiting for ever with every test
// passed. Here the file's process group is killed once it exits (runFile).
const runner = [
  "--import",
  "tsx",
  "--test-reporter=spec",
  // A file whose tests are done but which left a handle open (a socket, a timer) would stay alive.
  "--test-force-exit",
  ...passthrough,
];
const startedAt = Date.now();
const outcomes = [];
for (const file of files) outcomes.push(await runFile(file));
const seconds = Math.round((Date.now() - startedAt) / 1000);
const failed = outcomes.filter((o) => !o.ok);
const slowest = [...outcomes].sort((a, b) => b.ms - a.ms).slice(0, 10);
console.log(
  `run-tests: slowest files: ${slowest.map((o) => `${o.file} ${Math.round(o.ms / 1000)} s`).join(", ")}`,
);
if (failed.length > 0)
  console.log(`run-tests: failed: ${failed.map((o) => `${o.file} (${o.why})`).join(", ")}`);
console.log(
  `run-tests: ${files.length} file(s), ${failed.length} failed, KAFKA_TESTBED=${env.KAFKA_TESTBED || "mock"}, ${seconds} s`,
);
process.exit(failed.length === 0 ? 0 : 1);

/**
 * One test file in a process group of its own: when it exits, what it started and left behind (a
 * broker, an emulator, a CLI under test, anything holding our output open) is killed with the
 * group, so no file can hold up the next one or the end of the run. One file at a time:
 * integration files start brokers and emulators of their own, and two at once time out on a
 * 2-core machine.
 */
function runFile(file) {
  return new Promise((resolveFile) => {
    const began = Date.now();
    const child = spawn(process.execPath, [...runner, file], { stdio: "inherit", env, detached: true });
    const killGroup = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // Gone already.
      }
    };
    // Detached, the group no longer gets the terminal's Ctrl-C: pass it on, and stop after it.
    const forward = (signal) => {
      killGroup(signal);
      process.exit(130);
    };
    process.once("SIGINT", forward).once("SIGTERM", forward);
    const watchdog = setTimeout(() => {
      console.log(`run-tests: ${file} still running after ${FILE_TIMEOUT_MS / 60_000} min: killed`);
      killGroup("SIGKILL");
    }, FILE_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(watchdog);
      process.off("SIGINT", forward).off("SIGTERM", forward);
      killGroup("SIGKILL");
      const why = code === 0 ? "" : code !== null ? `exit ${code}` : `killed by ${signal}`;
      resolveFile({ file, ok: code === 0, why, ms: Date.now() - began });
    });
  });
}

/**
 * Every test on the mock and, at the same time, the contract suite on real Kafka, in two lanes.
 * The real lane was done long before the mock lane (590 of 1,510 s in a clean-clone run), so it
 * also takes the files that start real Kafka whatever the test bed (REAL_KAFKA_ONLY_TESTS) and
 * then the unit and infra tests (they start no broker; infra moved there when the batches-mode
 * cases made the mock lane 1,343 s against this lane's 1,176 in a clean-clone run).
 * Given paths, the mock lane runs those instead and the real lane only the contract suite.
 * Exits when both lanes did.
 */
async function runBothLanes(rest) {
  const paths = rest.filter((a) => !a.startsWith("--"));
  const options = rest.filter((a) => a.startsWith("--"));
  const realOnly = new Set(REAL_KAFKA_ONLY_TESTS);
  const mockFiles = testFilesUnder("test").filter(
    (f) => !f.startsWith(join("test", "unit")) && !f.startsWith(join("test", "infra")) && !realOnly.has(f),
  );
  const lanes = [
    [{ name: "mock", args: ["--testbed=mock", ...options, ...(paths.length > 0 ? paths : mockFiles)] }],
    [
      { name: "real", args: ["--contract", "--testbed=real", ...options] },
      ...(paths.length > 0
        ? []
        : [
            { name: "real", args: ["--testbed=mock", ...options, ...REAL_KAFKA_ONLY_TESTS] },
            { name: "unit", args: ["--testbed=mock", ...options, "test/unit"] },
            { name: "infra", args: ["--testbed=mock", ...options, "test/infra"] },
          ]),
    ],
  ];
  const startedAt = Date.now();
  const results = await Promise.all(lanes.map((steps) => runSteps(steps)));
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  const failed = results
    .flat()
    .filter((r) => r.code !== 0)
    .map((r) => r.name);
  // A log's tail is often all a CI run keeps: what failed, from either lane, goes last.
  if (failed.length > 0) {
    console.log("run-tests: what failed (the lines around each ✖ and each lane's failed files):");
    for (const line of failureLines) console.log(line);
  }
  console.log(
    `run-tests: both lanes in ${seconds} s; ${failed.length === 0 ? "all passed" : `failed: ${failed.join(", ")}`}`,
  );
  process.exit(failed.length === 0 ? 0 : 1);
}

/** The *.test.ts files under `dir`, in name order. */
function testFilesUnder(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return testFilesUnder(path);
      return name.endsWith(".test.ts") ? [path] : [];
    });
}

/** One step after the other, each whatever the one before did; their names and exit codes. */
async function runSteps(steps) {
  const results = [];
  for (const step of steps) results.push({ name: step.name, code: await runLane(step) });
  return results;
}

/** One lane: this script with the lane's options, each line of its output prefixed with its name. */
function runLane({ name, args: laneArgs }) {
  return new Promise((resolveLane) => {
    const child = spawn(process.execPath, [process.argv[1], ...laneArgs], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const prefix = (stream, out) => {
      let pending = "";
      stream.setEncoding("utf8");
      let keep = 0;
      stream.on("data", (chunk) => {
        const lines = (pending + chunk).split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) {
          out.write(`[${name}] ${line}\n`);
          if (line.includes("✖") || line.startsWith("run-tests: failed:")) keep = LINES_AFTER_FAILURE + 1;
          if (keep > 0 && failureLines.length < MAX_FAILURE_LINES) failureLines.push(`[${name}] ${line}`);
          keep = Math.max(0, keep - 1);
        }
      });
      stream.on("end", () => pending !== "" && out.write(`[${name}] ${pending}\n`));
    };
    prefix(child.stdout, process.stdout);
    prefix(child.stderr, process.stderr);
    // Done when the lane exits, not when every holder of its pipes has gone (runFile kills what
    // each file left behind; this is the second belt). What it wrote last may still be in the
    // pipes: read for a moment more.
    child.on("exit", (code, signal) => {
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        resolveLane(code ?? (signal === null ? 1 : 128));
      }, 2_000);
    });
  });
}
