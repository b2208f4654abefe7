/** `kafka-mirror status`: lease owner, checkpoint, log end and lag of every selected partition. */
import { selectTopics } from "../../topics/selection.js";
import { ExitCode } from "../cli-error.js";
import { type CliCommand, defineCommand } from "../command.js";
import { type CliIo, renderTable } from "../console.js";
import { readLeaseState } from "../leases.js";
import { type StatusRow, statusRows } from "../status-rows.js";
import { CONFIG_OPTIONS, globalOptions } from "./config-options.js";
import { type GlobalOptions, openClusters } from "./context.js";

export async function statusCommand(options: GlobalOptions, io: CliIo): Promise<number> {
  const clusters = await openClusters(options, io);
  try {
    const { rows, footer } = await collectStatus(options, clusters);
    if (options.json) {
      io.stdout.write(`${JSON.stringify({ partitions: rows }, null, 2)}\n`);
    } else if (rows.length === 0) {
      io.stdout.write("no source topic matches the whitelist\n");
    } else {
      io.stdout.write(`${formatStatus(rows, Date.now())}\n${footer}\n`);
    }
    return ExitCode.OK;
  } finally {
    await clusters.close();
  }
}

async function collectStatus(
  options: GlobalOptions,
  clusters: Awaited<ReturnType<typeof openClusters>>,
): Promise<{ rows: StatusRow[]; footer: string }> {
  const { config, mapping, source, logger } = clusters;
  // First: from the wrong directory there is nothing to compare the logs with.
  const { leases, footer } = await readLeaseState(config, { ...options, logger });
  const sourceTopics = await source.admin.listTopics();
  const { selected } = selectTopics(
    mapping,
    sourceTopics.map((t) => t.name),
  );
  const partitionsOf = new Map(sourceTopics.map((t) => [t.name, t.partitions]));
  const topics = [];
  for (const { source: name } of selected) {
    const partitions = [...Array(partitionsOf.get(name) ?? 0).keys()];
    topics.push({ name, offsets: await source.admin.listOffsets(name, partitions) });
  }
  return { rows: statusRows(topics, leases, config.worker.startFrom, Date.now()), footer };
}

export function formatStatus(rows: readonly StatusRow[], now: number): string {
  return renderTable(
    ["Topic", "Pid", "Owner", "Expires", "Checkpoint", "LogEnd", "Lag", "LastProgress"],
    rows.map((r) => [
      r.topic,
      r.partition,
      r.heldBy,
      r.expiresAt === null
        ? null
        : r.expiresAt > now
          ? `in ${span(r.expiresAt - now)}`
          : `${ago(r.expiresAt, now)} (expired)`,
      r.checkpoint,
      r.logEnd,
      r.lag,
      r.lastProgressAt === null ? null : ago(r.lastProgressAt, now),
    ]),
  );
}

function ago(at: number, now: number): string {
  return `${span(now - at)} ago`;
}

/** A duration as the table shows it: seconds under 2 min, minutes under 2 h, then hours. */
function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1_000));
  return s < 120 ? `${s} s` : s < 7_200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3_600)} h`;
}

export const STATUS_COMMAND: CliCommand = defineCommand({
  name: "status",
  summary: "owner, checkpoint, log end and lag of every partition",
  options: CONFIG_OPTIONS,
  example: "kafka-mirror status --config mirror.yaml --json",
  run: (values, io, signal) => statusCommand(globalOptions(STATUS_COMMAND, values, signal), io),
});
