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
  const alias = Buffer.from(p.alias, "ascii");
  if (alias.length > 255) throw new RangeError("provenance alias longer than 255 bytes");
  const out = Buffer.alloc(1 + 1 + alias.length + 4 + 8);
  let at = out.writeUInt8(PROVENANCE_VERSION, 0);
  at = out.writeUInt8(alias.length, at);
  at += alias.copy(out, at);
  at = out.writeInt32BE(p.partition, at);
  out.writeBigInt64BE(BigInt(p.offset), at);
  return out;
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
  const header: RecordHeader = {
    key: settings.header,
    value: encodeProvenance({
      alias: settings.sourceAlias,
      partition: sourcePartition,
      offset: record.offset,
    }),
  };
  return { ...record, headers: [...record.headers, header] };
}
