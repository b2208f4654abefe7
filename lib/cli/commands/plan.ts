/**
 * `kafka-mirror plan`: what the whitelist and blacklist select, and how each target differs from
 * its source: missing topics (created), too few partitions (grown), synced configs that differ
 * (set), settings only the target has (kept) and source settings that are not copied (and why).
 * The drift is the planner's (readDrift), the same the workers apply; nothing is changed here.
 *
 * Exit code 1 only for a selected topic that cannot be mirrored at all (its target name collides
 * with another's, or its name cannot be mapped); drift that a run fixes by itself is not an error.
 */
import { readDrift } from "../../core/plan/planner.js";
import type { TopicDrift } from "../../core/plan/topic-drift.js";
import { configSyncPolicy } from "../../replicator.js";
import { selectTopics } from "../../topics/selection.js";
import { ExitCode } from "../cli-error.js";
import { type CliCommand, defineCommand } from "../command.js";
import { type CliIo, renderTable } from "../console.js";
import { CONFIG_OPTIONS, globalOptions } from "./config-options.js";
import { type GlobalOptions, openClusters } from "./context.js";

/** One selected topic in `plan --json`. */
export interface PlannedTopic {
  readonly source: string;
  readonly target: string;
  readonly partitions: number;
  /** Partitions of the target topic, or null when it does not exist yet. */
  readonly targetPartitions: number | null;
  /** "ok", "create" (will be created) or "grow" (will get the source's partition count). */
  readonly action: TopicDrift["partitions"];
  /** What config sync will set (on "create": the configs it is created with). */
  readonly configChanges: TopicDrift["configs"];
  /** Settings only the target has; never deleted. */
  readonly targetOnly: TopicDrift["targetOnly"];
  /** Source settings not copied, and why. */
  readonly unsynced: TopicDrift["unsynced"];
  /** The target's compression.type when it makes its broker recompress what we send; else null. */
  readonly recompressedAs: TopicDrift["recompressedAs"];
}

export async function planCommand(options: GlobalOptions, io: CliIo): Promise<number> {
  const clusters = await openClusters(options, io);
  try {
    const [drift, sourceTopics] = await Promise.all([
      readDrift({
        sourceAdmin: clusters.source.admin,
        targetAdmin: clusters.target.admin,
        mapping: clusters.mapping,
        configSync: configSyncPolicy(clusters.config),
      }),
      clusters.source.admin.listTopics(),
    ]);
    const selection = selectTopics(
      clusters.mapping,
      sourceTopics.map((t) => t.name),
    );
    const planned = drift.topics.map(plannedTopic);
    const problems = drift.errors.map(({ topic, error }) => ({
      topic,
      code: error.code,
      message: error.message,
    }));
    const warnings = drift.warnings.map(({ topic, error }) => ({
      topic,
      code: error.code,
      message: error.message,
    }));
    const inSync = planned.every((p) => p.action === "ok" && p.configChanges.length === 0);
    if (options.json) {
      const out = { inSync, selected: planned, skipped: selection.skipped, errors: problems, warnings };
      io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    } else {
      io.stdout.write(renderPlan(planned, inSync, clusters.config.target.compression));
      const skipped = selection.skipped.filter((s) => s.reason !== "internal");
      const lines = [
        ...skipped.map((s) => `  ${s.topic}: ${s.message}`),
        ...problems.map((p) => `  ${p.topic}: ${p.message} [${p.code}]`),
      ];
      if (lines.length > 0) io.stdout.write(`\nnot mirrored:\n${lines.join("\n")}\n`);
      for (const w of warnings) io.stdout.write(`\nwarning: ${w.message}\n`);
    }
    return problems.length > 0 ? ExitCode.FAILED : ExitCode.OK;
  } finally {
    await clusters.close();
  }
}

function plannedTopic(d: TopicDrift): PlannedTopic {
  return {
    source: d.source,
    target: d.target,
    partitions: d.sourcePartitions,
    targetPartitions: d.targetPartitions,
    action: d.partitions,
    configChanges: d.configs,
    targetOnly: d.targetOnly,
    unsynced: d.unsynced,
    recompressedAs: d.recompressedAs,
  };
}

/** plan's text: a table of the selected topics, then each config change, kept setting and warning. */
export function renderPlan(planned: readonly PlannedTopic[], inSync: boolean, codec: string): string {
  if (planned.length === 0) return "no source topic is selected\n";
  const table = renderTable(
    ["Source topic", "Target topic", "Partitions", "Target partitions", "Action", "Config changes"],
    planned.map((p) => [
      p.source,
      p.target,
      p.partitions,
      p.targetPartitions,
      p.action,
      p.configChanges.length,
    ]),
  );
  const details = planned.flatMap((p) => [
    ...p.configChanges.map((c) => `  ${p.target}: set ${c.name} ${c.from ?? "(unset)"} -> ${c.to}`),
    ...p.targetOnly.map((name) => `  ${p.target}: keep ${name} (target only)`),
    ...p.unsynced.map((u) => `  ${p.target}: not copied ${u.name}=${u.source} (${u.why})`),
    ...(p.recompressedAs === null
      ? []
      : [
          `  ${p.target}: compression.type=${p.recompressedAs} makes its broker recompress the ${codec} batches we send (target.compression); set it to ${codec} or producer`,
        ]),
  ]);
  const summary = inSync ? "\nin sync: nothing to create, grow or set\n" : "";
  return `${table}\n${details.length > 0 ? `\nconfigs:\n${details.join("\n")}\n` : ""}${summary}`;
}

export const PLAN_COMMAND: CliCommand = defineCommand({
  name: "plan",
  summary: "which topics are selected, and what the target lacks",
  options: CONFIG_OPTIONS,
  example: "kafka-mirror plan --config mirror.yaml",
  run: (values, io, signal) => planCommand(globalOptions(PLAN_COMMAND, values, signal), io),
});
