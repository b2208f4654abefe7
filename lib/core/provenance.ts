/**
 * The provenance header every copied record carries: which cluster, partition and offset it was
 * copied from. It serves two purposes:
 *  - exactly-once: after a crash the next lease holder reads the target partition's tail and
 *    finds, by these headers, the last source offset that already landed (see target-tail.ts);
 *  - loop prevention: in an active-active pair a record that came from the other side carries
 *    that side's alias and is not copied back.
 *
 * Value layout (compact binary, big-endian):
 *   version  u8     1
 *   alias    u8 length, then that many bytes (the cluster alias, ASCII)
 *   partition int32
 *   offset    int64
 * A record copied over several hops carries one header per hop, in hop order; ours is appended
 * last, so the last provenance header of a record is always the hop that wrote it.
 */
import type { MirrorRecord, RecordHeader } from "./model.js";

export const PROVENANCE_VERSION = 1;
export const DEFAULT_PROVENANCE_HEADER = "kafka-mirror.provenance";

export interface Provenance {
  readonly alias: string;
  readonly partition: number;
  readonly offset: number;
}

export interface ProvenanceSettings {
  /** Header key, as bytes. */
  readonly header: Buffer;
  /** Alias of the cluster we copy from; written into every copied record. */
  readonly sourceAlias: string;
  /** Alias of the cluster we copy to, when known: its records coming back are not copied. */
  readonly targetAlias: string | null;
}

export function encodeProvenance(p: Provenance): Buffer {
  return valueWithOffset(provenancePrefix(p.alias, p.partition), p.offset);
}

/**
 * Our provenance header for every record of one write: its key, and the fixed start of its value
 * (version, alias, partition). The value ends with each record's own source offset (int64), so
 * a writer can lay the header out in place per record instead of the core building a header,
 * a value buffer and a copy of the record for every record it copies.
 */
export interface ProvenanceStamp {
  readonly key: Buffer;
  readonly prefix: Buffer;
}

/** Bytes a stamp adds to a record's value: the source offset. */
export const STAMP_OFFSET_BYTES = 8;

/** The stamp of everything copied from `sourcePartition` under these settings. */
export function stampFor(settings: ProvenanceSettings, sourcePartition: number): ProvenanceStamp {
  return { key: settings.header, prefix: provenancePrefix(settings.sourceAlias, sourcePartition) };
}

/** The header value a stamp gives the record at `offset`. */
export function stampValue(stamp: ProvenanceStamp, offset: number): Buffer {
  return valueWithOffset(stamp.prefix, offset);
}

function provenancePrefix(alias: string, partition: number): Buffer {
  const aliasBytes = Buffer.from(alias, "ascii");
  if (aliasBytes.length > 255) throw new RangeError("provenance alias longer than 255 bytes");
  const prefix = Buffer.alloc(1 + 1 + aliasBytes.length + 4);
  let at = prefix.writeUInt8(PROVENANCE_VERSION, 0);
  at = prefix.writeUInt8(aliasBytes.length, at);
  at += aliasBytes.copy(prefix, at);
  prefix.writeInt32BE(partition, at);
  return prefix;
}

function valueWithOffset(prefix: Buffer, offset: number): Buffer {
  const value = Buffer.allocUnsafe(prefix.length + STAMP_OFFSET_BYTES);
  prefix.copy(value, 0);
  value.writeBigInt64BE(BigInt(offset), prefix.length);
  return value;
}

/** The record as a stamped write puts it in the target: all its headers, then ours. */
export function stamped(record: MirrorRecord, stamp: ProvenanceStamp): MirrorRecord {
  const header: RecordHeader = { key: stamp.key, value: stampValue(stamp, record.offset) };
  return { ...record, headers: [...record.headers, header] };
}

/** Null for anything that is not a provenance value we understand (never throws on foreign bytes). */
export function decodeProvenance(value: Buffer | null): Provenance | null {
  if (value === null || value.length < 2 || value.readUInt8(0) !== PROVENANCE_VERSION) return null;
  const aliasLength = value.readUInt8(1);
  if (value.length !== 2 + aliasLength + 12) return null;
  const alias = value.toString("ascii", 2, 2 + aliasLength);
  const partition = value.readInt32BE(2 + aliasLength);
  const offset = value.readBigInt64BE(6 + aliasLength);
  if (offset < 0n || offset > BigInt(Number.MAX_SAFE_INTEGER) || partition < 0) return null;
  return { alias, partition, offset: Number(offset) };
}

/** Every provenance header of a record, in hop order. */
export function provenanceChain(record: MirrorRecord, header: Buffer): Provenance[] {
  const out: Provenance[] = [];
  for (const h of record.headers) {
    if (!h.key.equals(header)) continue;
    const p = decodeProvenance(h.value);
    if (p !== null) out.push(p);
  }
  return out;
}

/** The hop that wrote this record: its last provenance header, or null. */
export function lastProvenance(record: MirrorRecord, header: Buffer): Provenance | null {
  for (let i = record.headers.length - 1; i >= 0; i--) {
    const h = record.headers[i];
    if (h === undefined || !h.key.equals(header)) continue;
    const p = decodeProvenance(h.value);
    if (p !== null) return p;
  }
  return null;
}

/**
 * A record is not copied when it already passed through the cluster we write to (it came from
 * the other side of an active-active pair) or through the cluster we read from (it went round a
 * ring and came back). Any hop counts, so rings longer than two clusters are cut as well.
 */
export function isLoopback(record: MirrorRecord, settings: ProvenanceSettings): boolean {
  if (record.headers.length === 0) return false;
  for (const p of provenanceChain(record, settings.header)) {
    if (p.alias === settings.sourceAlias || p.alias === settings.targetAlias) return true;
  }
  return false;
}

/** The record as it is written to the target: all its headers, then ours. */
export function withProvenance(
  record: MirrorRecord,
  settings: ProvenanceSettings,
  sourcePartition: number,
): MirrorRecord {
  return stamped(record, stampFor(settings, sourcePartition));
}
