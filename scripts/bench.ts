/**
 * `npm run bench`: kafka-mirror against the C pipeline `kcat -C -e | kcat -P` on the same freshly
 * started pair of local clusters and the same data, plus latency at a fixed rate, peak RSS, CPU
 * per GiB and a Lambda cost estimate. Prints a table, then one JSON line. Options: see --help.
 */
import { parseBenchOptions, USAGE } from "./bench/options.js";
import { formatTable, summarize } from "./bench/report.js";
import { runBench } from "./bench/run.js";

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const options = parseBenchOptions(argv);
  const result = await runBench(options, (line) => process.stderr.write(`bench: ${line}\n`));
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
