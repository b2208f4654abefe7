// kcat (apt package `kcat`, 1.7.1 on Debian's librdkafka 2.0.2) as an independent Kafka client:
// records written by a producer that shares no code with kafkajs, and a reader to check what a
// test wrote. Debian's build writes and reads all four codecs (gzip, snappy, lz4, zstd); the mock
// broker stores batches without decompressing them, so its own --disable-zstd build is no limit.
//
// Producing goes through one kcat process per call, records piped on stdin as
//   key KEY_DELIM value MSG_DELIM
// with delimiters of random bytes chosen per call. kcat splits on the first occurrence of each,
// so every call checks that no key or value makes a delimiter appear early (and picks new ones if
// it does). Limits of kcat's input format, enforced here:
//   - with -Z an empty key or value becomes NULL, without -Z NULL cannot be expressed, so one
//     call cannot mix NULL and empty (non-null) keys/values;
//   - headers are the same for every record of a call (kcat's static -H), and are text
//     (process arguments cannot hold NUL).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";

export const KCAT = "/usr/bin/kcat";

export type KcatCompression = "none" | "gzip" | "snappy" | "lz4" | "zstd";

export interface KcatRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

export interface KcatProduceOptions {
  readonly brokers: readonly string[] | string;
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly KcatRecord[];
  /** @default "none" */
  readonly compression?: KcatCompression;
  /** Added to every record; a null value gives a header with a NULL value. */
  readonly headers?: readonly (readonly [name: string, value: string | null])[];
  /** Extra librdkafka properties, passed as -X name=value. */
  readonly config?: Readonly<Record<string, string>>;
  /** @default 60000 */
  readonly timeoutMs?: number;
}

export interface KcatReadOptions {
  readonly brokers: readonly string[] | string;
  readonly topic: string;
  readonly partition: number;
  /** First offset to read. @default 0 */
  readonly fromOffset?: number;
  /** Extra librdkafka properties, passed as -X name=value (e.g. isolation.level). */
  readonly config?: Readonly<Record<string, string>>;
  /** @default 60000 */
  readonly timeoutMs?: number;
}

export interface KcatReadRecord extends KcatRecord {
  readonly offset: number;
}

const DELIMITER_BYTES = 6;

/** Produces the records in order to one partition, acks=all; rejects if any delivery fails. */
export async function kcatProduce(opts: KcatProduceOptions): Promise<void> {
  if (opts.records.length === 0) return;
  const hasNull = opts.records.some((r) => r.key === null || r.value === null);
  const hasEmpty = opts.records.some((r) => r.key?.length === 0 || r.value?.length === 0);
  if (hasNull && hasEmpty) {
    throw new Error(
      "kcat cannot produce NULL and empty keys/values in the same call (-Z maps empty to NULL)",
    );
  }
  const { input, keyDelimiter, messageDelimiter } = encodeInput(opts.records);
  const largest = opts.records.reduce(
    (max, r) => Math.max(max, (r.key?.length ?? 0) + (r.value?.length ?? 0)),
    0,
  );

  const args = ["-P", "-q", "-b", brokerList(opts.brokers), "-t", opts.topic, "-p", String(opts.partition)];
  args.push("-K", escapeDelimiter(keyDelimiter), "-D", escapeDelimiter(messageDelimiter));
  if (hasNull) args.push("-Z");
  const compression = opts.compression ?? "none";
  if (compression !== "none") args.push("-z", compression);
  for (const [name, value] of opts.headers ?? []) {
    if (name.length === 0 || name.includes("=") || name.includes("\0") || value?.includes("\0")) {
      throw new Error(`kcat cannot send header ${JSON.stringify(name)}: names need no '=', no NUL anywhere`);
    }
    args.push("-H", value === null ? name : `${name}=${value}`);
  }
  // kcat's stdin buffer is message.max.bytes long; a record must fit in it whole.
  const config: Record<string, string> = {
    "message.max.bytes": String(Math.max(1_000_000, largest + 64 * 1024)),
    acks: "all",
    // Without a bound, a record the broker keeps refusing blocks the call for librdkafka's 5 min.
    "message.timeout.ms": "30000",
    ...opts.config,
  };
  for (const [name, value] of Object.entries(config)) args.push("-X", `${name}=${value}`);

  const { code, stderr } = await runKcat(args, input, opts.timeoutMs ?? 60_000);
  // kcat reports failed deliveries on stderr but may still exit 0.
  if (code !== 0 || /Delivery failed|% ERROR/.test(stderr)) {
    throw new Error(
      `kcat produce to ${opts.topic}[${opts.partition}] failed (exit ${code}): ${stderr.trim()}`,
    );
  }
}

/** Reads a partition from fromOffset to its current end. */
export async function kcatRead(opts: KcatReadOptions): Promise<KcatReadRecord[]> {
  // Lengths as text, then the raw bytes: binary-safe, unlike kcat's delimited output.
  const args = [...consumeArgs(opts), "-f", "%o %K %S\n%k%s"];
  const { code, stdout, stderr } = await runKcat(args, null, opts.timeoutMs ?? 60_000);
  if (code !== 0)
    throw new Error(`kcat read of ${opts.topic}[${opts.partition}] failed (exit ${code}): ${stderr}`);
  return decodeOutput(stdout);
}

export interface KcatDetailedRecord extends KcatReadRecord {
  /** The record's timestamp (ms), as kcat's %T prints it. */
  readonly timestamp: number;
  /** Its headers as kcat's %h prints them: name=value, comma-separated (text headers only). */
  readonly headers: string;
}

/** As kcatRead, with each record's timestamp and headers. */
export async function kcatReadDetailed(opts: KcatReadOptions): Promise<KcatDetailedRecord[]> {
  const args = [...consumeArgs(opts), "-f", "%o %K %S %T %h\n%k%s"];
  const { code, stdout, stderr } = await runKcat(args, null, opts.timeoutMs ?? 60_000);
  if (code !== 0)
    throw new Error(`kcat read of ${opts.topic}[${opts.partition}] failed (exit ${code}): ${stderr}`);
  return decodeOutput(stdout, true) as KcatDetailedRecord[];
}

/** Number of records from fromOffset to the partition's end. */
export async function kcatConsumeCount(opts: KcatReadOptions): Promise<number> {
  const args = [...consumeArgs(opts), "-f", "\n"];
  const { code, stdout, stderr } = await runKcat(args, null, opts.timeoutMs ?? 60_000);
  if (code !== 0)
    throw new Error(`kcat count of ${opts.topic}[${opts.partition}] failed (exit ${code}): ${stderr}`);
  return stdout.length;
}

/**
 * The compression codecs of the batches a consumer receives, from librdkafka's debug log (the
 * consumer names each fetched batch's codec); proves what a producer really wrote.
 */
export async function kcatBatchCodecs(opts: KcatReadOptions): Promise<Set<string>> {
  const args = [...consumeArgs(opts).filter((a) => a !== "-q"), "-f", "%o", "-d", "fetch"];
  const { code, stderr } = await runKcat(args, null, opts.timeoutMs ?? 60_000);
  if (code !== 0)
    throw new Error(`kcat read of ${opts.topic}[${opts.partition}] failed (exit ${code}): ${stderr}`);
  const codecs = new Set<string>();
  for (const match of stderr.matchAll(/Enqueue \d+ message\(s\).* aborted msgsets, (\w+)\)/g)) {
    if (match[1]) codecs.add(match[1] === "uncompressed" ? "none" : match[1]);
  }
  return codecs;
}

function consumeArgs(opts: KcatReadOptions): string[] {
  return [
    "-C",
    "-q",
    "-e",
    "-b",
    brokerList(opts.brokers),
    "-t",
    opts.topic,
    "-p",
    String(opts.partition),
    "-o",
    String(opts.fromOffset ?? 0),
    ...Object.entries(opts.config ?? {}).flatMap(([name, value]) => ["-X", `${name}=${value}`]),
  ];
}

function brokerList(brokers: readonly string[] | string): string {
  return typeof brokers === "string" ? brokers : brokers.join(",");
}

function encodeInput(records: readonly KcatRecord[]): {
  input: Buffer;
  keyDelimiter: Buffer;
  messageDelimiter: Buffer;
} {
  for (let attempt = 0; attempt < 8; attempt++) {
    const keyDelimiter = delimiter();
    const messageDelimiter = delimiter();
    const parts: Buffer[] = [];
    let ok = true;
    for (const record of records) {
      const key = record.key ?? Buffer.alloc(0);
      const value = record.value ?? Buffer.alloc(0);
      // kcat cuts the key at the first key delimiter and the record at the first message
      // delimiter, so both must first occur exactly where we put them.
      const framed = Buffer.concat([key, keyDelimiter, value, messageDelimiter]);
      if (
        framed.indexOf(keyDelimiter) !== key.length ||
        framed.indexOf(messageDelimiter) !== key.length + keyDelimiter.length + value.length
      ) {
        ok = false;
        break;
      }
      parts.push(framed);
    }
    if (ok) return { input: Buffer.concat(parts), keyDelimiter, messageDelimiter };
  }
  throw new Error("kcat: could not find delimiters absent from the records");
}

/** kcat undoes escapes in -K/-D a second time after its \xNN pass, so a backslash produced
 * by \x5c starts another escape: \x5c\x6e became a newline and kcat split on other bytes than
 * ours (seen once in the replication test: an empty record read back as the delimiter). */
const BACKSLASH = 0x5c;

/** Distinct non-zero bytes: kcat takes the delimiter as a C string, and distinct bytes cannot
 * overlap with themselves, which keeps the first-occurrence check above sufficient. */
function delimiter(): Buffer {
  const seen = new Set<number>();
  const bytes: number[] = [];
  while (bytes.length < DELIMITER_BYTES) {
    const [b] = randomBytes(1);
    if (b !== undefined && b !== 0 && b !== BACKSLASH && !seen.has(b)) {
      seen.add(b);
      bytes.push(b);
    }
  }
  return Buffer.from(bytes);
}

function escapeDelimiter(bytes: Buffer): string {
  return [...bytes].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
}

/** kcat's output of "%o %K %S\n%k%s", or with `detailed` "%o %K %S %T %h\n%k%s". */
function decodeOutput(stdout: Buffer, detailed = false): KcatReadRecord[] {
  const records: KcatReadRecord[] = [];
  const pattern = detailed ? /^(\d+) (-?\d+) (-?\d+) (-?\d+) (.*)$/ : /^(\d+) (-?\d+) (-?\d+)$/;
  let pos = 0;
  while (pos < stdout.length) {
    const eol = stdout.indexOf(0x0a, pos);
    if (eol < 0) throw new Error("kcat output: truncated record header");
    const header = stdout.subarray(pos, eol).toString("latin1");
    const match = pattern.exec(header);
    if (!match) throw new Error(`kcat output: unexpected record header ${JSON.stringify(header)}`);
    const keyLength = Number(match[2]);
    const valueLength = Number(match[3]);
    pos = eol + 1;
    const keyEnd = pos + Math.max(keyLength, 0);
    const valueEnd = keyEnd + Math.max(valueLength, 0);
    if (valueEnd > stdout.length) throw new Error("kcat output: truncated record body");
    const record = {
      offset: Number(match[1]),
      key: keyLength < 0 ? null : Buffer.from(stdout.subarray(pos, keyEnd)),
      value: valueLength < 0 ? null : Buffer.from(stdout.subarray(keyEnd, valueEnd)),
    };
    const detail: KcatDetailedRecord | null = detailed
      ? { ...record, timestamp: Number(match[4]), headers: match[5] ?? "" }
      : null;
    records.push(detail ?? record);
    pos = valueEnd;
  }
  return records;
}

function runKcat(
  args: readonly string[],
  input: Buffer | null,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(KCAT, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    // kcat exiting early (e.g. on a fatal error) closes its stdin; the exit code reports it.
    child.stdin.on("error", () => undefined);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${KCAT} (apt package kcat): ${error.message}`));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      const stderr = Buffer.concat(err).toString("utf8");
      resolve({
        code: signal ? null : code,
        stdout: Buffer.concat(out),
        stderr: signal ? `killed by ${signal} after ${timeoutMs} ms; ${stderr}` : stderr,
      });
    });
    child.stdin.end(input ?? undefined);
  });
}
