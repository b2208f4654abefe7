#!/usr/bin/env node
// The package's bin. In the repository it runs the TypeScript sources through tsx (registered for
// this process only), so it is never stale against them. An installed package has no sources: it
// runs dist/cli.js, the bundle `npm pack` builds (scripts/build.mjs), with production
// dependencies only. The CLI itself is lib/cli/main.ts.
import { existsSync } from "node:fs";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
const sources = new URL("../lib/cli/main.ts", import.meta.url);
let cli;
if (existsSync(sources)) {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import(sources.href);
} else {
  cli = await import("../dist/cli.js");
}
await cli.main();
