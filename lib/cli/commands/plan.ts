/** `kafka-mirror plan`: what the whitelist and blacklist select, and what the target lacks. */
import { selectTopics } from "../../topics/selection.js";
import { ExitCode } from "../cli-error.js";
import { type CliIo, renderTable } from "../console.js";
import { type GlobalOptions, openClusters } from "./context.js";

export interface PlannedTopic {
  readonly source: string;
  readonly target: string;
  readonly partitions: number;
  /** Partitions of the target topic, or null when it does not exist yet. */
  readonly targetPartitions: number | null;
  /** "ok", "create" (kafka-mirror will create it) or "too-few-partitions" (an error when run). */
  readonly action: "ok" | "create" | "too-few-partitions";
}

export async function planCommand(options: GlobalOptions, io: CliIo): Promise<number> {
  const clusters = await openClusters(options, io);
  try {
    const [sourceTopics, targetTopics] = await Promise.all([
      clusters.source.admin.listTopics(),
      clusters.target.admin.listTopics(),
    ]);
    const targetPartitions = new Map(targetTopics.map((t) => [t.name, t.partitions]));
    const partitionsOf = new Map(sourceTopics.map((t) => [t.name, t.partitions]));
    const selection = selectTopics(clusters.mapping, partitionsOf.keys());
    const planned: PlannedTopic[] = selection.selected.map(({ source, target }) => {
      const partitions = partitionsOf.get(source) ?? 0;
      const existing = targetPartitions.get(target) ?? null;
      const action = existing === null ? "create" : existing < partitions ? "too-few-partitions" : "ok";
      return { source, target, partitions, targetPartitions: existing, action };
    });
    if (options.json) {
      io.stdout.write(`${JSON.stringify({ selected: planned, skipped: selection.skipped }, null, 2)}\n`);
    } else {
      io.stdout.write(
        planned.length === 0
          ? "no source topic is selected\n"
          : `${renderTable(
              ["Source topic", "Target topic", "Partitions", "Target partitions", "Action"],
              planned.map((p) => [p.source, p.target, p.partitions, p.targetPartitions, p.action]),
            )}\n`,
      );
      const skipped = selection.skipped.filter((s) => s.reason !== "internal");
      if (skipped.length > 0) {
        io.stdout.write(`\nnot mirrored:\n${skipped.map((s) => `  ${s.topic}: ${s.message}`).join("\n")}\n`);
      }
    }
    return planned.some((p) => p.action === "too-few-partitions") ? ExitCode.FAILED : ExitCode.OK;
  } finally {
    await clusters.close();
  }
}
