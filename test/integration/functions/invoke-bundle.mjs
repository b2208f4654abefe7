// Loads a Lambda bundle exactly as Lambda's Node runtime would (ESM import of index.mjs, then
// `handler(event, context)`) and prints the handler's result as one line starting with RESULT.
// Everything else the bundle writes to stdout (structured logs, EMF metrics) passes through.
// Usage: node invoke-bundle.mjs <bundle dir> <event JSON> <time budget ms>
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [bundleDir, eventJson, budgetMs] = process.argv.slice(2);
const deadline = Date.now() + Number(budgetMs);
const context = {
  functionName: "kafka-mirror-bundle-test",
  functionVersion: "$LATEST",
  invokedFunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:kafka-mirror-bundle-test",
  memoryLimitInMB: "1024",
  awsRequestId: randomUUID(),
  logGroupName: "/aws/lambda/kafka-mirror-bundle-test",
  logStreamName: "local",
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  done() {},
  fail() {},
  succeed() {},
};

const { handler } = await import(pathToFileURL(join(bundleDir, "index.mjs")).href);
try {
  const result = await handler(JSON.parse(eventJson), context);
  const remainingMs = context.getRemainingTimeInMillis();
  // execArgv: the node flags it ran with (the exec wrapper's, when the bundle has one).
  const ran = { execArgv: process.execArgv, node: process.version };
  process.stdout.write(`RESULT ${JSON.stringify({ ok: true, result, remainingMs, ...ran })}\n`);
} catch (error) {
  process.stdout.write(`RESULT ${JSON.stringify({ ok: false, error: String(error?.message ?? error) })}\n`);
}
// Like a frozen Lambda container, the bundle keeps its connections open; end the process here.
process.exit(0);
