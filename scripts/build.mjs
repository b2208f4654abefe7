#!/usr/bin/env node
// Builds the package's JavaScript (run by `npm pack` through prepack): the CLI and the embedded
// lease server's daemon, each one ESM bundle of our code for Node 20+, with every npm package left
// as an import. The build fails if one of those imports is not a production dependency, since an
// installed package (`npm install --omit=dev`) would then crash at the first run.
//
// `--outdir DIR --entry NAME=PATH` builds one more entry point beside the daemon into DIR instead:
// the bench's worker, so that the bench measures the code as it ships, not as tsx runs it.
import { rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const { values: args } = parseArgs({ options: { outdir: { type: "string" }, entry: { type: "string" } } });
const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
const outdir =
  args.outdir === undefined ? new URL("../dist/", import.meta.url).pathname : resolve(args.outdir);
rmSync(outdir, { recursive: true, force: true });
/** The daemon always: the embedded lease store starts it from beside the code that uses it. */
const entryPoints = { daemon: "lib/dynamodb/embedded/daemon.ts" };
if (args.entry === undefined) entryPoints.cli = "lib/cli/main.ts";
else {
  const [name, path] = args.entry.split("=");
  if (!name || !path) {
    console.error(
      `--entry ${JSON.stringify(args.entry)}: expected NAME=PATH, e.g. worker=scripts/bench/mirror-worker.ts`,
    );
    process.exit(2);
  }
  entryPoints[name] = path;
}

const result = await build({
  absWorkingDir: root,
  entryPoints,
  outdir,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  metafile: true,
  logLevel: "warning",
});

/** `@scope/name/deep/path` → `@scope/name`, `name/deep` → `name`. */
const packageOf = (specifier) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");
const builtin = new Set(builtinModules);
const production = new Set(Object.keys(pkg.dependencies ?? {}));
const missing = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const { path, external } of output.imports) {
    if (!external || path.startsWith("node:") || builtin.has(path)) continue;
    if (!production.has(packageOf(path))) missing.add(packageOf(path));
  }
}
if (missing.size > 0) {
  console.error(`dist imports packages that are not production dependencies: ${[...missing].join(", ")}`);
  process.exit(1);
}
console.error(`built ${Object.keys(result.metafile.outputs).join(", ")}`);
