#!/usr/bin/env node
// Runs the test files under the given folders (default: test/) with Node's own test runner and
// tsx for TypeScript. Node 20's --test cannot glob *.ts files itself, so we list them here.
// Integration tests start brokers and emulators of their own; running them one file at a time
// keeps a 2-core machine from timing them out.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const roots = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith("--"));
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
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=1", "--test-reporter=spec", ...passthrough, ...files],
  { stdio: "inherit", env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" } },
);
process.exit(result.status ?? 1);
