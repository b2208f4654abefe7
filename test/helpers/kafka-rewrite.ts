// Response rewrites the SASL proxy needs so that clients stay on it: ApiVersions gains
// SaslHandshake and SaslAuthenticate (the mock has neither), and Metadata and FindCoordinator
// name the proxy's listeners instead of the brokers'. Each takes the response payload (after the
// size prefix, starting with the correlation id) and returns a new one; bytes past the parsed
// part are copied unchanged.
import { WireReader, WireWriter } from "./kafka-wire.js";

export const API = {
  Metadata: 3,
  FindCoordinator: 10,
  SaslHandshake: 17,
  ApiVersions: 18,
  SaslAuthenticate: 36,
} as const;

export interface ApiRange {
  readonly apiKey: number;
  readonly min: number;
  readonly max: number;
}

/** node id -> the address clients must use for it. */
export type AddressMap = ReadonlyMap<number, { readonly host: string; readonly port: number }>;

/** Drops any entries for the keys in `add`, appends `add`; error responses are left alone. */
export function rewriteApiVersions(payload: Buffer, version: number, add: readonly ApiRange[]): Buffer {
  const flexible = version >= 3; // ApiVersions keeps response header v0 even when flexible
  const r = new WireReader(payload);
  const correlationId = r.int32();
  const errorCode = r.int16();
  if (errorCode !== 0) return payload;
  const count = r.arrayLength(flexible);
  const kept: ApiRange[] = [];
  for (let i = 0; i < count; i++) {
    const entry = { apiKey: r.int16(), min: r.int16(), max: r.int16() };
    if (flexible) r.skipTaggedFields();
    if (!add.some((a) => a.apiKey === entry.apiKey)) kept.push(entry);
  }
  const all = [...kept, ...add];
  const w = new WireWriter().int32(correlationId).int16(0).arrayLength(all.length, flexible);
  for (const e of all) {
    w.int16(e.apiKey).int16(e.min).int16(e.max);
    if (flexible) w.emptyTaggedFields();
  }
  return w.raw(r.rest()).bytesWritten();
}

/** Metadata v0-v12: the broker array's hosts and ports. Throws on a node id it cannot map. */
export function rewriteMetadata(payload: Buffer, version: number, addresses: AddressMap): Buffer {
  const flexible = version >= 9;
  const r = new WireReader(payload);
  const w = new WireWriter().int32(r.int32());
  if (flexible) copyTaggedFields(r, w);
  if (version >= 3) w.int32(r.int32()); // throttle_time_ms
  const count = r.arrayLength(flexible);
  w.arrayLength(count, flexible);
  for (let i = 0; i < count; i++) {
    const nodeId = r.int32();
    r.string(flexible);
    r.int32();
    const to = mapped(addresses, nodeId);
    w.int32(nodeId).string(to.host, flexible).int32(to.port);
    if (version >= 1) w.string(r.string(flexible), flexible); // rack
    if (flexible) copyTaggedFields(r, w);
  }
  return w.raw(r.rest()).bytesWritten();
}

/** FindCoordinator v0-v3 (the versions the proxy advertises): the coordinator's host and port. */
export function rewriteFindCoordinator(payload: Buffer, version: number, addresses: AddressMap): Buffer {
  const flexible = version >= 3;
  const r = new WireReader(payload);
  const w = new WireWriter().int32(r.int32());
  if (flexible) copyTaggedFields(r, w);
  if (version >= 1) w.int32(r.int32()); // throttle_time_ms
  const errorCode = r.int16();
  w.int16(errorCode);
  if (version >= 1) w.string(r.string(flexible), flexible); // error_message
  const nodeId = r.int32();
  const host = r.string(flexible);
  const port = r.int32();
  // An error answer (COORDINATOR_NOT_AVAILABLE ...) carries node -1 and no address to map.
  const to = nodeId < 0 ? { host: host ?? "", port } : mapped(addresses, nodeId);
  w.int32(nodeId).string(to.host, flexible).int32(to.port);
  return w.raw(r.rest()).bytesWritten();
}

function mapped(addresses: AddressMap, nodeId: number): { host: string; port: number } {
  const to = addresses.get(nodeId);
  if (!to) throw new Error(`broker ${nodeId} has no proxy listener`);
  return to;
}

function copyTaggedFields(r: WireReader, w: WireWriter): void {
  const start = r.offset;
  r.skipTaggedFields();
  w.raw(r.buf.subarray(start, r.offset));
}
