/**
 * A reader may leave SourceBatch.contentCrc null (a batch that passes as it came under a
 * target.compression: its CRC uncompressed costs a decompression; or one whose CRC the worker's
 * reader left to the target's broker). What compares batches by it (translation, verify) reads
 * them through here.
 */
import type { FetchedBatches } from "./model.js";
import type { SourceReader } from "./ports.js";

/** `fetched` with every batch's contentCrc computed by `reader`. */
export async function withContentCrcs(
  reader: SourceReader,
  fetched: FetchedBatches,
): Promise<FetchedBatches> {
  if (fetched.batches.every((b) => b.contentCrc !== null)) return fetched;
  const batches = [];
  for (const b of fetched.batches)
    batches.push(b.contentCrc === null ? { ...b, contentCrc: await reader.contentCrc(b) } : b);
  return { ...fetched, batches };
}
