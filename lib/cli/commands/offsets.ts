/**
 * `kafka-mirror offsets`: for every selected consumer group and partition, the committed source
 * offset, its exact translation into the target, the target's committed offset and the records
 * not yet copied. Reads only; `failover` (and the lag function's sync) commit.
 */
import { hasLiveMembers } from "../../offsets/group-liveness.js";
import type { PartitionOffsetsRow } from "../../offsets/group-offsets.js";
import { groupOffsets } from "../../offsets/group-offsets.js";
import { createGroupSelector } from "../../offsets/group-selection.js";
import { ExitCode } from "../cli-error.js";
import { type CliCommand, defineCommand } from "../command.js";
import { type CliIo, renderTable } from "../console.js";
import { CONFIG_OPTIONS, globalOptions } from "./config-options.js";
import type { GlobalOptions } from "./context.js";
import { openGroupContext } from "./group-context.js";

export interface OffsetsOptions extends GlobalOptions {
  /** Whole-name pattern of group ids; default the config's groups selection, else every group. */
  readonly group?: string;
}

export interface GroupOffsetsReport {
  readonly groupId: string;
  /** Members on the target right now. */
  readonly targetMembers: number;
  /** In use on the target (group-liveness.ts): never synced, `failover` refuses. */
  readonly activeOnTarget: boolean;
  readonly partitions: readonly PartitionOffsetsRow[];
}

export async function offsetsCommand(options: OffsetsOptions, io: CliIo): Promise<number> {
  // A bad pattern is bad input, named before anything is connected.
  const asked =
    options.group === undefined ? null : createGroupSelector({ whitelist: options.group }, "--group");
  const context = await openGroupContext(options, io);
  try {
    const { config } = context.clusters;
    const selector =
      asked ??
      createGroupSelector(
        config.groups.whitelist !== undefined
          ? config.groups
          : { whitelist: ".*", blacklist: config.groups.blacklist },
      );
    const ids = (await context.deps.sourceGroups.listGroups())
      .map((g) => g.groupId)
      .filter((id) => selector.isSelected(id))
      .sort();
    const described = ids.length === 0 ? [] : await context.deps.targetGroups.describeGroups(ids);
    const onTarget = new Map(described.map((d) => [d.groupId, d]));
    const groups: GroupOffsetsReport[] = [];
    for (const groupId of ids) {
      const partitions = await groupOffsets(context.deps, groupId, context.leases);
      const target = onTarget.get(groupId);
      if (partitions.length > 0)
        groups.push({
          groupId,
          targetMembers: target?.members ?? 0,
          activeOnTarget: target !== undefined && hasLiveMembers(target),
          partitions,
        });
    }
    if (options.json) io.stdout.write(`${JSON.stringify({ groups }, null, 2)}\n`);
    else if (groups.length === 0)
      io.stdout.write(`no selected consumer group has offsets on mirrored topics\n${context.footer}\n`);
    else io.stdout.write(`${formatOffsets(groups)}\n${context.footer}\n`);
    return ExitCode.OK;
  } finally {
    await context.close();
  }
}

export function formatOffsets(groups: readonly GroupOffsetsReport[]): string {
  return renderTable(
    ["Group", ...PARTITION_COLUMNS],
    groups.flatMap((g) =>
      g.partitions.map((r) => [
        g.activeOnTarget ? `${g.groupId} (active on target)` : g.groupId,
        ...partitionCells(r, r.targetCommitted),
      ]),
    ),
  );
}

/** The columns of one group partition, in `offsets` and `failover`. */
export const PARTITION_COLUMNS = [
  "Topic",
  "Pid",
  "SourceCommitted",
  "TargetTopic",
  "Translated",
  "NextRecord",
  "TargetCommitted",
  "NotCopied",
] as const;

/** The cells of PARTITION_COLUMNS; `targetCommitted` as the command leaves it. */
export function partitionCells(
  r: PartitionOffsetsRow,
  targetCommitted: number | null,
): (string | number | null)[] {
  return [
    r.topic,
    r.partition,
    r.sourceCommitted,
    r.targetTopic,
    r.translation?.targetOffset ?? null,
    nextRecord(r),
    targetCommitted,
    r.notCopied,
  ];
}

/** What the partition delivers next from the translated position, in source terms. */
export function nextRecord(r: PartitionOffsetsRow): string {
  if (r.translation === null) return `untranslatable: ${r.problem ?? "no offset map"}`;
  if (r.translation.nextSourceOffset !== null) return `source offset ${r.translation.nextSourceOffset}`;
  return r.aheadOfMirror > 0
    ? `the next record copied (group ${r.aheadOfMirror} ahead of the mirror)`
    : "the next record copied";
}

export const OFFSETS_COMMAND: CliCommand = defineCommand({
  name: "offsets",
  summary:
    "consumer groups: source committed, exact target translation, target committed, records not yet copied",
  options: {
    ...CONFIG_OPTIONS,
    group: {
      type: "string",
      arg: "REGEX",
      help: "whole-name pattern of the group ids to show",
      default: "groups.whitelist, else every group",
    },
  },
  example: "kafka-mirror offsets --config mirror.yaml --group 'billing-.*'",
  run: (values, io, signal) => {
    const options = globalOptions(OFFSETS_COMMAND, values, signal);
    return offsetsCommand({ ...options, ...(values.group === undefined ? {} : { group: values.group }) }, io);
  },
});
