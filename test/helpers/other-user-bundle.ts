/**
 * Code for a process of another local user. A test that runs one as `nobody` (to be refused as a
 * stranger) cannot load tsx, our sources or node_modules from the checkout: nobody may not be
 * able to enter it at all (a clone under /root is 0700).
 */
import { chmod, mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * Bundles each entry (a path from the checkout's root, or absolute) with everything it imports
 * into `<name>.js` in a new directory anyone can read; returns the directory.
 */
export async function bundleForOtherUsers(entryPoints: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "kafka-mirror-bundle-"));
  await build({
    absWorkingDir: fileURLToPath(new URL("../..", import.meta.url)),
    entryPoints,
    outdir: dir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    // Some bundled CommonJS packages call require(); ESM output has none of its own.
    banner: {
      js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);",
    },
  });
  await chmod(dir, 0o755);
  for (const name of await readdir(dir)) await chmod(join(dir, name), 0o644);
  return dir;
}
