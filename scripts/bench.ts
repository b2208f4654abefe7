/**
 * `npm run bench`: kafka-mirror against the C pipeline `kcat -C -e | kcat -P` on the same freshly
 * started pair of local clusters and the same data, plus latency at a fixed rate, peak RSS, CPU
 * per GiB and a Lambda cost estimate. Prints a table, then one JSON line. With `--kafka real`,
 * on real Apache Kafka clusters and with MirrorMaker 2 as a third tool (scripts/bench/real.ts).
 * Options: see --help.
 */
import { parseBenchOptions, USAGE } from "./bench/options.js";
import { runRealBench } from "./bench/real.js";
import { formatTable, summarize } from "./bench/report.js";
import { formatRealTable, summarizeReal } from "./bench/report-real.js";
import { runBench } from "./bench/run.js";

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const options = parseBenchOptions(argv);
  const log = (line: string): void => {
    process.stderr.write(`bench: ${line}\n`);
  };
  if (options.kafka === "real") {
    const result = await runRealBench(options, log);
    const summary = summarizeReal(result);
    process.stdout.write(`${formatRealTable(result)}\n`);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return summary.verified && summary.mm2_verified ? 0 : 1;
  }
  const result = await runBench(options, log);
  process.stdout.write(`${formatTable(result)}\n`);
  process.stdout.write(`${JSON.stringify(summarize(result))}\n`);
  return result.mirror.verified ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
