// One kcat call whose exit code and stderr are the answer: "can this client list metadata
// through that address with these settings?" (plaintext against TLS, a wrong password, ...).
import { execFile } from "node:child_process";
import { KCAT } from "./kcat.js";

export interface KcatProbe {
  readonly ok: boolean;
  readonly stderr: string;
}

/** `kcat -L` against one address with -X settings; never rejects, reports failure instead. */
export function kcatListMetadata(
  address: string,
  config: Readonly<Record<string, string>>,
  timeoutMs = 15_000,
): Promise<KcatProbe> {
  const args = [
    "-b",
    address,
    "-L",
    "-m",
    "4",
    ...Object.entries(config).flatMap(([k, v]) => ["-X", `${k}=${v}`]),
  ];
  return new Promise((resolve) => {
    execFile(KCAT, args, { timeout: timeoutMs, encoding: "utf8" }, (error, _stdout, stderr) => {
      resolve({ ok: error === null, stderr });
    });
  });
}

/** Each partition's leader of `topic` as kcat (librdkafka) reads it from Metadata (`kcat -L -J`). */
export function kcatLeaders(
  brokers: readonly string[],
  topic: string,
  config: Readonly<Record<string, string>> = {},
  timeoutMs = 15_000,
): Promise<Map<number, number>> {
  const args = ["-b", brokers.join(","), "-L", "-J", "-t", topic, "-m", "5"];
  args.push(...Object.entries(config).flatMap(([k, v]) => ["-X", `${k}=${v}`]));
  return new Promise((resolve, reject) => {
    execFile(KCAT, args, { timeout: timeoutMs, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`kcat -L -t ${topic} failed: ${error.message} ${stderr}`));
      const listing = JSON.parse(stdout) as {
        topics?: { topic: string; partitions?: { partition: number; leader: number }[] }[];
      };
      const partitions = listing.topics?.find((t) => t.topic === topic)?.partitions ?? [];
      resolve(new Map(partitions.map((p) => [p.partition, p.leader])));
    });
  });
}
