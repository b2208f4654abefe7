#!/usr/bin/env node
// Installs the native binaries the Lambda bundles carry into node_modules/.lambda-native/ (run by
// `prepare`, so `npm ci` and `npm install` do it; `npm run lambda-native` by hand). The functions
// run on arm64 Linux (glibc), and npm installs only the host's optional platform packages, so on
// an x64 machine or a Mac the arm64 binary of @node-rs/crc32 (the codec's CRC-32C) would be
// missing; infra/replicator-function.ts copies it from here into each bundle.
//
// The versions and integrity hashes are the repository's package-lock.json entries, written into a
// lockfile of its own there and installed by `npm ci` with npm's platform override (`--os --cpu
// --libc`): the same bytes the root lockfile pins, checked by npm, with nothing else to keep in
// step. Inside node_modules so worktrees that share it share this too; npm skips dot-folders there.
// Already installed at the locked versions: nothing to do (no network).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the bundles' native packages go; infra/replicator-function.ts copies what its package.json lists. */
const LAMBDA_NATIVE_DIR = join(ROOT, "node_modules", ".lambda-native");
/** The Lambda functions' platform (infra/replicator-function.ts: Architecture.ARM_64, nodejs22.x). */
const PLATFORM = { os: "linux", cpu: "arm64", libc: "glibc" };
/** The platform packages the bundles need, each the binary of a production dependency. */
const PACKAGES = ["@node-rs/crc32-linux-arm64-gnu"];
/** npm settings a lifecycle script inherits that would point the nested npm elsewhere. */
const KEPT_NPM_SETTINGS =
  /^npm_config_(registry|cache|userconfig|cafile|ca|proxy|https_proxy|noproxy|strict_ssl|fetch_.*)$/;

const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
const locked = PACKAGES.map((name) => {
  const entry = lock.packages?.[`node_modules/${name}`];
  if (entry?.version === undefined || entry.integrity === undefined) {
    fail(`package-lock.json has no entry with a version and an integrity for ${name}`);
  }
  return { name, version: entry.version, entry };
});

if (locked.every(({ name, version }) => installedVersion(name) === version)) process.exit(0);

rmSync(LAMBDA_NATIVE_DIR, { recursive: true, force: true });
mkdirSync(LAMBDA_NATIVE_DIR, { recursive: true });
const manifest = {
  name: "kafka-mirror-lambda-native",
  private: true,
  // Optional: npm refuses a required dependency for another platform whatever --cpu says.
  optionalDependencies: Object.fromEntries(locked.map(({ name, version }) => [name, version])),
};
writeFileSync(join(LAMBDA_NATIVE_DIR, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
const lockfile = {
  name: manifest.name,
  lockfileVersion: 3,
  requires: true,
  packages: {
    "": { name: manifest.name, optionalDependencies: manifest.optionalDependencies },
    ...Object.fromEntries(locked.map(({ name, entry }) => [`node_modules/${name}`, entry])),
  },
};
writeFileSync(join(LAMBDA_NATIVE_DIR, "package-lock.json"), `${JSON.stringify(lockfile, null, 2)}\n`);

const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) => !key.startsWith("npm_config_") || KEPT_NPM_SETTINGS.test(key),
  ),
);
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ["npm"];
const args = [
  "ci",
  `--prefix=${LAMBDA_NATIVE_DIR}`,
  `--os=${PLATFORM.os}`,
  `--cpu=${PLATFORM.cpu}`,
  `--libc=${PLATFORM.libc}`,
  "--include=optional",
  "--ignore-scripts",
  "--no-audit",
  "--no-fund",
  "--loglevel=error",
];
const [command = "npm", ...rest] = npm;
const result = spawnSync(command, [...rest, ...args], { cwd: LAMBDA_NATIVE_DIR, env, stdio: "inherit" });
if (result.status !== 0)
  fail(`npm ci for the Lambda's native packages exited ${result.status ?? result.signal}`);
for (const { name, version } of locked) {
  if (installedVersion(name) !== version) fail(`${name}@${version} was not installed`);
}
console.error(`lambda-native: ${locked.map(({ name, version }) => `${name}@${version}`).join(", ")}`);

function installedVersion(name) {
  const path = join(LAMBDA_NATIVE_DIR, "node_modules", name, "package.json");
  return existsSync(path) ? JSON.parse(readFileSync(path, "utf8")).version : undefined;
}

function fail(message) {
  console.error(`lambda-native: ${message}`);
  process.exit(1);
}
