/**
 * Lambda mode: the `replicate` bundle `cdk synth` wrote, invoked once per tick per worker slot
 * as EventBridge would (its rule's event plus the tick's time), each invocation a process of its
 * own with Lambda's remaining-time clock set to the function's timeout for that tick.
 */
import { replicateTimeoutSeconds } from "../../functions/timing.js";
import {
  bundleEnvironment,
  invokeBundle,
  plaintextStackParameters,
  type SynthesizedBundles,
  synthesizeBundles,
} from "../../test/helpers/lambda-bundles.js";
import type { SoakRig } from "./rig.js";
import { sleep, type Traffic } from "./traffic.js";

export interface LambdaModeOptions {
  readonly ticks: number;
  readonly tickSeconds: number;
  readonly slots: number;
}

const REGION = "eu-west-1";

export async function synthesize(): Promise<SynthesizedBundles> {
  return synthesizeBundles(REGION);
}

/** Runs `ticks` ticks; traffic stops 30 s into the last tick, after its handoffs. */
export async function runLambdaMode(
  rig: SoakRig,
  bundles: SynthesizedBundles,
  options: LambdaModeOptions,
  traffic: Traffic,
  log: (line: string) => void,
): Promise<void> {
  const bundle = bundles.replicate;
  const env = {
    ...bundleEnvironment(
      bundle,
      {
        // The bundle tests' parameter set, so a new stack parameter reaches the soak too.
        ...plaintextStackParameters(
          { source: rig.source.bootstrapServers, target: rig.target.bootstrapServers },
          rig.topicPattern,
        ),
        SourceAlias: "soak",
        KAFKA_MIRROR_TICK_SECONDS: String(options.tickSeconds),
      },
      rig.table,
    ),
    KAFKA_MIRROR_BATCH_MAX_WAIT_MS: String(rig.maxWaitMs),
    // DynamoDB Local keeps tables per region: the one the rig created the table in.
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: rig.proxy.endpoint,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
    POWERTOOLS_METRICS_DISABLED: "true",
    PATH: process.env.PATH ?? "",
  };
  const timeoutMs = replicateTimeoutSeconds(options.tickSeconds / 60) * 1_000;
  const runs: Promise<void>[] = [];
  const start = Date.now();
  for (let tick = 0; tick < options.ticks; tick++) {
    const at = start + tick * options.tickSeconds * 1_000;
    await sleep(Math.max(0, at - Date.now()));
    log(`tick ${tick + 1}/${options.ticks}: ${options.slots} invocations`);
    for (let slot = 1; slot <= options.slots; slot++) {
      const event = JSON.stringify({
        source: "kafka-mirror.schedule",
        kind: "replicate",
        worker: slot,
        time: new Date(at).toISOString(),
      });
      runs.push(
        invokeBundle({ ...bundle, event }, env, timeoutMs).then(
          ({ result }) =>
            log(`tick ${tick + 1} slot ${slot}: ${JSON.stringify(result.result ?? result.error)}`),
          (error: unknown) => log(`tick ${tick + 1} slot ${slot} failed: ${String(error)}`),
        ),
      );
    }
  }
  await sleep(30_000);
  await traffic.stopProducing();
  log("traffic stopped; waiting for the last runs");
  await Promise.all(runs);
}
