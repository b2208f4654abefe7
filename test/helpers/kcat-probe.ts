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
