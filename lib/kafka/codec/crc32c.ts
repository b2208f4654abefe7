/**
 * CRC-32C (Castagnoli), the checksum of Kafka's v2 record batches: `crc32c` below is the one
 * function the codec calls for it. The replicator checks every fetched batch and sums every
 * produced one, so this is one of the largest costs of a copy (a fifth of the worker's CPU in
 * JavaScript).
 *
 * Two implementations, chosen once when this module loads:
 * - native: `@node-rs/crc32`, a napi-rs addon with a prebuilt binary per platform (its optional
 *   packages, e.g. `@node-rs/crc32-linux-arm64-gnu`), which sums with the CPU's CRC-32C
 *   instruction (SSE4.2 `crc32` on x86-64, the ARMv8 CRC extension's `crc32c` on arm64);
 * - js: our slicing-by-16 tables (crc32c-js.ts), where the addon does not load (no binary for
 *   the platform, or none in a Lambda bundle), or when KAFKA_MIRROR_CRC32C=js asks for it.
 * lib/replicator.ts logs the choice at debug when it builds a worker.
 */
import { createRequire } from "node:module";
import { ReplicatorError } from "../../errors.js";
import { jsCrc32c } from "./crc32c-js.js";

/** CRC-32C of `buf[start..end)`, as an unsigned 32-bit number. */
export type Crc32cFunction = (buf: Uint8Array, start?: number, end?: number) => number;

export type Crc32cImplementation = "native" | "js";

/** `js` forces the JavaScript implementation; unset or empty: native where it loads. */
export const CRC32C_VARIABLE = "KAFKA_MIRROR_CRC32C";

/** The package the native implementation comes from. */
export const NATIVE_CRC32C_PACKAGE = "@node-rs/crc32";

export interface Crc32cChoice {
  readonly implementation: Crc32cImplementation;
  readonly crc32c: Crc32cFunction;
  /** Why this one: the variable, or why the native package did not load. */
  readonly reason: string;
}

/** What `@node-rs/crc32` exports that we call (its index.d.ts). */
interface NodeRsCrc32 {
  crc32c(input: Uint8Array, initialState?: number): number;
}

/**
 * `@node-rs/crc32`'s crc32c over our signature, or the error that kept it from loading. It is a
 * CommonJS package that picks its platform's `.node` binary at require time, hence `require`;
 * Lambda bundles copy it beside the bundle (infra/replicator-function.ts).
 */
export function loadNativeCrc32c(): Crc32cFunction | Error {
  let binding: Partial<NodeRsCrc32>;
  try {
    binding = createRequire(import.meta.url)(NATIVE_CRC32C_PACKAGE) as Partial<NodeRsCrc32>;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
  const native = binding.crc32c;
  if (typeof native !== "function") return new Error(`${NATIVE_CRC32C_PACKAGE} has no crc32c function`);
  // The addon reads a Uint8Array's bytes in place (napi_get_typedarray_info), and subarray is a
  // view of the same memory: no copy either way.
  return (buf, start = 0, end = buf.length) =>
    native(start === 0 && end === buf.length ? buf : buf.subarray(start, end));
}

/**
 * THE choice, from the variable's value and the native loader: the native implementation unless
 * the variable says `js` or the native package does not load. Throws CONFIG_INVALID for any other
 * value of the variable: a misspelt `js` would otherwise silently measure the native one.
 */
export function chooseCrc32c(
  setting: string | undefined,
  loadNative: () => Crc32cFunction | Error,
): Crc32cChoice {
  if (setting === "js") return { implementation: "js", crc32c: jsCrc32c, reason: `${CRC32C_VARIABLE}=js` };
  if (setting !== undefined && setting !== "") {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `invalid ${CRC32C_VARIABLE}: ${JSON.stringify(setting)}; "js" forces the JavaScript CRC-32C, unset or empty uses the native one where it loads`,
      { details: { issues: [{ path: CRC32C_VARIABLE, message: "must be js or empty" }] } },
    );
  }
  const native = loadNative();
  if (native instanceof Error) {
    return {
      implementation: "js",
      crc32c: jsCrc32c,
      reason: `${NATIVE_CRC32C_PACKAGE} did not load: ${native.message.split("\n")[0]}`,
    };
  }
  return { implementation: "native", crc32c: native, reason: `${NATIVE_CRC32C_PACKAGE} loaded` };
}

const CHOICE = chooseCrc32c(process.env[CRC32C_VARIABLE], loadNativeCrc32c);

/** CRC-32C of `buf[start..end)`, as an unsigned 32-bit number, by the implementation chosen at load. */
export const crc32c: Crc32cFunction = CHOICE.crc32c;

/** Which implementation `crc32c` is. */
export function crc32cImplementation(): Crc32cImplementation {
  return CHOICE.implementation;
}

/** The implementation `crc32c` is and why, for the log line of a worker's start. */
export function crc32cChoice(): { readonly implementation: Crc32cImplementation; readonly reason: string } {
  return { implementation: CHOICE.implementation, reason: CHOICE.reason };
}
