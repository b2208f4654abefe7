/**
 * The head of a Produce v3..v7 body whose record batch belongs to a transaction. Same layout as
 * protocol/produce.ts, except that the first field carries the transactional.id instead of null:
 * Kafka refuses transactional batches sent without one (TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
 * and ties the batch's offsets to that id's open transaction. The response is decoded by
 * decodeProduceResponse.
 */
import { bodyLength, type RequestBody } from "./kafkajs-internals.js";
import { firstPart, type ProduceHead, writePartitionHead } from "./produce.js";

/** Kafka's limit on a protocol string (int16 length). */
const MAX_STRING_BYTES = 32_767;

export interface TransactionalProduceHead extends ProduceHead {
  /** The transactional.id, UTF-8 (transactionalIdFor, lib/kafka/produce/transactional-id.ts). */
  readonly transactionalId: Buffer;
}

/** Bytes in front of the record set: encode the batch with this headroom. */
export function transactionalProduceHeadSize(topic: Buffer, transactionalId: Buffer): number {
  // transactional_id, acks, timeout, topic count, name, partition count, partition, record set size
  return 2 + transactionalId.length + 2 + 4 + 4 + 2 + topic.length + 4 + 4 + 4;
}

/**
 * Writes the head into the first transactionalProduceHeadSize(...) bytes of `body`; the rest of
 * `body` is the record set, which must hold batches encoded with `isTransactional: true`.
 */
export function writeTransactionalProduceHead<B extends RequestBody>(
  body: B,
  head: TransactionalProduceHead,
): B {
  const { transactionalId, topic } = head;
  if (transactionalId.length === 0 || transactionalId.length > MAX_STRING_BYTES) {
    throw new RangeError(
      `transactional id must be 1..${MAX_STRING_BYTES} bytes, not ${transactionalId.length}`,
    );
  }
  const headSize = transactionalProduceHeadSize(topic, transactionalId);
  const first = firstPart(body, headSize);
  let at = first.writeInt16BE(transactionalId.length, 0);
  at += transactionalId.copy(first, at);
  writePartitionHead(first, at, head, bodyLength(body) - headSize);
  return body;
}
