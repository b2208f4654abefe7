#!/usr/bin/env node
// Builds the package's JavaScript (run by `npm pack` through prepack): the CLI and the embedded
// lease server's daemon, each one ESM bundle of our code for Node 20+, with every npm package left
// as an import. The build fails if one of those imports is not a production dependency, since an
// installed package (`npm install --omit=dev`) would then crash at the first run.
import { rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { build } from "esbuild";

const pkg = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
const outdir = new URL("../dist/", import.meta.url).pathname;
rmSync(outdir, { recursive: true, force: true });

const result = await build({
  absWorkingDir: new URL("..", import.meta.url).pathname,
  entryPoints: { cli: "lib/cli/main.ts", daemon: "lib/dynamodb/embedded/daemon.ts" },
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
