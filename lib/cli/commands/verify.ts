/** `kafka-mirror verify`: source against target, partition by partition; non-zero on any mismatch. */
import type { PartitionComparison } from "../../verify/compare-partition.js";
import { type VerifyReport, verifyMirror } from "../../verify/verify-mirror.js";
import { ExitCode } from "../cli-error.js";
import { type CliCommand, commandHelp, defineCommand, usageError } from "../command.js";
import { type CliIo, count, isTerminal, LiveBlock, progressBar, renderTable } from "../console.js";
import { CONFIG_OPTIONS, globalOptions } from "./config-options.js";
import { type GlobalOptions, mirrorHeaderOf, openClusters } from "./context.js";

export interface VerifyCommandOptions extends GlobalOptions {
  readonly fromOffset?: number;
}

export async function verifyCommand(options: VerifyCommandOptions, io: CliIo): Promise<number> {
  const clusters = await openClusters(options, io);
  try {
    const live = !options.json && isTerminal(io) ? new LiveBlock(io) : null;
    let done = 0;
    const report = await verifyMirror({
      source: clusters.source,
      target: clusters.target,
      mapping: clusters.mapping,
      mirrorHeader: mirrorHeaderOf(clusters.config),
      copy: clusters.config.target.copy,
      ...(options.fromOffset === undefined ? {} : { fromOffset: options.fromOffset }),
      signal: options.signal,
      onPartition: () => {
        done++;
        live?.draw(`verifying ${progressBar(done, done)} ${done} partitions`);
      },
    });
    if (options.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else io.stdout.write(`${formatVerify(report)}\n`);
    return report.ok ? ExitCode.OK : ExitCode.FAILED;
  } finally {
    await clusters.close();
  }
}

export function formatVerify(report: VerifyReport): string {
  const lines: string[] = [];
  if (report.partitions.length > 0) {
    lines.push(
      renderTable(
        ["Topic", "Pid", "Source range", "Target range", "Source records", "Target records", "Result"],
        report.partitions.map((p) => [
          p.source.topic,
          p.source.partition,
          `${p.sourceRange.from}..${p.sourceRange.to}`,
          `${p.targetRange.from}..${p.targetRange.to}`,
          p.sourceRecords,
          p.targetRecords,
          p.mismatch === null ? `ok ${p.sourceDigest.slice(0, 12)}` : p.mismatch.kind.toUpperCase(),
        ]),
      ),
    );
  }
  for (const problem of report.topicProblems) lines.push(`MISMATCH ${problem.source}: ${problem.message}`);
  if (report.emptySelection !== null) lines.push(`NOTHING COMPARED: ${report.emptySelection}`);
  const first = report.partitions.find((p) => p.mismatch !== null);
  if (first?.mismatch) lines.push(`first mismatch: ${first.mismatch.message}`);
  lines.push(verifySummary(report));
  return lines.join("\n");
}

export function verifySummary(report: VerifyReport): string {
  const records = report.partitions.reduce((n, p: PartitionComparison) => n + p.sourceRecords, 0);
  const bad = report.partitions.filter((p) => p.mismatch !== null).length + report.topicProblems.length;
  if (report.emptySelection !== null) return "verify: FAILED, no topic selected, nothing compared";
  return report.ok
    ? `verify: OK, ${count(records)} records in ${report.partitions.length} partitions identical`
    : `verify: FAILED, ${bad} mismatch(es) in ${report.partitions.length} partitions compared`;
}

export const VERIFY_COMMAND: CliCommand = defineCommand({
  name: "verify",
  summary: "compare source and target; exit 1 on any mismatch",
  options: {
    ...CONFIG_OPTIONS,
    "from-offset": {
      type: "string",
      arg: "N",
      help: "compare each partition from this source offset on",
      default: "each partition's first record",
    },
  },
  example: "kafka-mirror verify --config mirror.yaml",
  run: (values, io, signal) => {
    const options = globalOptions(VERIFY_COMMAND, values, signal);
    const from = values["from-offset"];
    if (from !== undefined && !/^\d+$/.test(from)) {
      throw usageError(
        `--from-offset must be a non-negative integer, got "${from}"`,
        commandHelp(VERIFY_COMMAND),
      );
    }
    return verifyCommand({ ...options, ...(from === undefined ? {} : { fromOffset: Number(from) }) }, io);
  },
});
