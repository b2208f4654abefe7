/**
 * CLI mode: one long-running `kafka-mirror run` (the real bin) with its leases in DynamoDB Local
 * behind the counting proxy, across at least one of its round boundaries (5 minutes).
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SoakRig } from "./rig.js";
import { sleep, type Traffic } from "./traffic.js";

const BIN = join(import.meta.dirname, "..", "..", "bin", "kafka-mirror.js");

export async function runCliMode(
  rig: SoakRig,
  dir: string,
  seconds: number,
  traffic: Traffic,
  log: (line: string) => void,
): Promise<void> {
  const config = join(dir, "soak-cli.json");
  await writeFile(
    config,
    JSON.stringify({
      source: { brokers: rig.source.bootstrapServers },
      target: { brokers: rig.target.bootstrapServers },
      topics: { whitelist: rig.topicPattern },
      batch: { maxWaitMs: rig.maxWaitMs },
      leases: { table: rig.table },
    }),
  );
  const child = spawn(
    process.execPath,
    [BIN, "run", "--config", config, "--lease-store", "dynamodb", "--worker-id", "soak-cli"],
    {
      stdio: ["ignore", "ignore", "pipe"],
      env: {
        ...process.env,
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "local",
        AWS_SECRET_ACCESS_KEY: "local",
        AWS_ENDPOINT_URL_DYNAMODB: rig.proxy.endpoint,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      },
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  log(`cli: kafka-mirror run for ${seconds} s`);
  await Promise.race([sleep(Math.max(0, seconds - 15) * 1_000), exited]);
  await traffic.stopProducing();
  // Stopped only once caught up (or a minute later): what is left uncopied then shows as missing.
  const until = Date.now() + 60_000;
  while (!traffic.drained && Date.now() < until) await sleep(100);
  child.kill("SIGINT");
  const code = await exited;
  log(`cli: exited ${code}${code === 0 || code === 130 ? "" : `\n${stderr}`}`);
}
