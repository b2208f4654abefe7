#!/usr/bin/env node
// The package's bin. The sources are TypeScript, run through tsx (registered for this process
// only); the CLI itself is lib/cli/main.ts.
import { register } from "tsx/esm/api";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
register();
const { main } = await import("../lib/cli/main.ts");
await main();
