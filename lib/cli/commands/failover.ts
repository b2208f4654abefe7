/**
 * `kafka-mirror failover --group G`: switch one consumer group to the target. One final exact
 * translation of its committed source offsets, committed on the target, refused (exit 1) while
 * the group has active members on the target. Prints the RPO (records of the group's partitions
 * not yet copied) and, per partition, the exact record the group will read next. `--dry-run`
 * commits nothing; `--force` moves a target offset backwards too. Failback is the same command
 * with a config whose source and target are swapped (README, "Failover and failback").
 */
import { hasLiveMembers } from "../../offsets/group-liveness.js";
import type { GroupSyncResult } from "../../offsets/sync.js";
import { syncGroup } from "../../offsets/sync.js";
import { ExitCode } from "../cli-error.js";
import { type CliCommand, commandHelp, defineCommand, usageError } from "../command.js";
import { type CliIo, count, renderTable } from "../console.js";
import { CONFIG_OPTIONS, globalOptions } from "./config-options.js";
import type { GlobalOptions } from "./context.js";
import { openGroupContext } from "./group-context.js";
import { PARTITION_COLUMNS, partitionCells } from "./offsets.js";

export interface FailoverOptions extends GlobalOptions {
  readonly group: string;
  readonly dryRun: boolean;
  readonly force: boolean;
}

export async function failoverCommand(options: FailoverOptions, io: CliIo): Promise<number> {
  const context = await openGroupContext(options, io);
  try {
    const [onSource] = await context.deps.sourceGroups.describeGroups([options.group]);
    const result = await syncGroup(context.deps, options.group, context.leases, {
      sourceAlias: context.sourceAlias,
      force: options.force,
      dryRun: options.dryRun,
    });
    const sourceMembers = onSource?.members ?? 0;
    const sourceActive = onSource !== undefined && hasLiveMembers(onSource);
    const untranslatable = result.rows.filter((r) => r.translation === null);
    const exitCode =
      result.status === "active" || result.status === "no-offsets" || untranslatable.length > 0
        ? ExitCode.FAILED
        : ExitCode.OK;
    if (options.json) {
      io.stdout.write(
        `${JSON.stringify({ ...result, rpoRecords: result.notCopied, sourceMembers, sourceActive }, null, 2)}\n`,
      );
    } else {
      const members = sourceActive ? sourceMembers || "some" : 0;
      io.stdout.write(`${formatFailover(result, options, members)}\n${context.footer}\n`);
    }
    return exitCode;
  } finally {
    await context.close();
  }
}

/** `sourceMembers`: 0 unless the group is in use on the source; "some" when in use with none counted. */
function formatFailover(
  result: GroupSyncResult,
  options: FailoverOptions,
  sourceMembers: number | "some",
): string {
  const lines: string[] = [];
  const group = JSON.stringify(result.groupId);
  if (result.status === "no-offsets") return `group ${group} has no committed offsets on mirrored topics`;
  if (result.status === "active") {
    lines.push(
      `refused: group ${group} has ${result.members || "some"} active member(s) on the target; ` +
        "stop its consumers there (or wait for them to leave) and run failover again",
    );
  }
  if (sourceMembers !== 0) {
    lines.push(
      `warning: group ${group} still has ${sourceMembers} member(s) on the source: their progress after ` +
        "this translation is not carried over; stop them first for an exact switch",
    );
  }
  const committed = new Set(result.committed.map((r) => `${r.topic}:${r.partition}`));
  lines.push(
    renderTable(
      PARTITION_COLUMNS,
      result.rows.map((r) => {
        const done = committed.has(`${r.topic}:${r.partition}`) && !options.dryRun;
        return partitionCells(r, done ? (r.translation?.targetOffset ?? null) : r.targetCommitted);
      }),
    ),
  );
  lines.push(
    `RPO: ${count(result.notCopied)} record(s) of group ${group}'s partitions not yet copied to the target`,
  );
  const verb = options.dryRun ? "would commit" : "committed";
  if (result.status === "synced")
    lines.push(`${verb} ${result.committed.length} partition(s) of group ${group} on the target`);
  if (result.status === "up-to-date")
    lines.push(`group ${group} is already at (or past) the translation on the target`);
  return lines.join("\n");
}

export const FAILOVER_COMMAND: CliCommand = defineCommand({
  name: "failover",
  summary:
    "commit G's final translation on the target (refused, exit 1, while G has members there); prints the RPO",
  options: {
    ...CONFIG_OPTIONS,
    group: { type: "string", arg: "G", required: true, help: "the consumer group to switch" },
    "dry-run": { type: "boolean", help: "show what would be committed; commit nothing" },
    force: { type: "boolean", help: "also move a target offset backwards" },
  },
  example: "kafka-mirror failover --config mirror.yaml --group billing --dry-run",
  run: (values, io, signal) => {
    const options = globalOptions(FAILOVER_COMMAND, values, signal);
    if (values.group === undefined || values.group === "") {
      throw usageError("failover needs --group G", commandHelp(FAILOVER_COMMAND));
    }
    const flags = { dryRun: values["dry-run"] ?? false, force: values.force ?? false };
    return failoverCommand({ ...options, group: values.group, ...flags }, io);
  },
});
