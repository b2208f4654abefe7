#!/usr/bin/perl
# Makes the mock cluster store compressed legacy (magic 0 and 1) message sets as Kafka's
# LogValidator does for a topic whose message.format.version is below 0.11. librdkafka 2.15.1's
# rd_kafka_mock_partition_log_append (src/rdkafka_mock.c) takes uncompressed v0/v1 sets (one
# offset per message) but refuses any compressed wrapper message with UNSUPPORTED_VERSION. With
# this patch gzip, snappy (raw or xerial) and lz4 (either KIP-57 framing) wrappers are taken and
# given offsets as Kafka gives them:
#  - v1 wrapper: its inner messages must carry the relative offsets 0..n-1 (as producers write
#    them, KIP-31; Kafka recompresses otherwise, this mock refuses with CORRUPT_MESSAGE, code 2); they are
#    kept as sent, and the wrapper's offset becomes the absolute offset of its LAST inner message;
#  - v0 wrapper: the inner messages get absolute offsets, so a gzip inner set is recompressed
#    and the wrapper rebuilt with a new CRC-32, its offset the last inner message's; a snappy or
#    lz4 v0 wrapper is not recompressed, so it is taken only when its inner offsets already are
#    the absolute ones (a producer numbers them from 0: the partition's first produce), and
#    refused with UNSUPPORTED_VERSION otherwise;
#  - uncompressed messages keep upstream's behaviour, one offset each.
# The partition log then advances by the number of inner messages. zstd (and unknown codecs)
# stay UNSUPPORTED_VERSION. Not modelled: LogAppendTime topics, the wrapper timestamp rewrite of
# Kafka's in-place assignment (the v1 wrapper keeps the producer's timestamp), up-conversion to
# v2 (Kafka 0.11+ with a v2 message format converts what a legacy producer sends; this mock keeps
# the old format, as a broker with message.format.version=0.10 would).
# Dies when the source does not match the pinned version. Idempotent: a patched file is left alone.
use strict;
use warnings;
use FindBin qw($Bin);
use lib $Bin;
use SourcePatch qw(source_to_patch replace_once write_patched);

my $file = shift or die "usage: patch-legacy-msgset.pl <librdkafka>/src/rdkafka_mock.c\n";
my $marker = "kafka-mirror test bed: legacy message sets";

my $src = source_to_patch($file, $marker);

replace_once(\$src, <<'OLD', <<'NEW', "the includes");
#include "rdunittest.h"
OLD
#include "rdunittest.h"
#include <zlib.h> /* kafka-mirror test bed: legacy message sets */
#include "snappy.h"
#include "lz4frame.h"
#include "rdxxhash.h"
NEW

# msgset_new no longer numbers legacy messages one by one: the caller has assigned every offset.
replace_once(\$src, <<'OLD', <<'NEW', "msgset_new's legacy offset loop");
                size_t of      = 0;
                int64_t offset = mset->first_offset;
                char *data     = (char *)mset->bytes.data;

                while (of + RD_KAFKAP_MESSAGESET_V0_HDR_SIZE <=
                       (size_t)mset->bytes.len) {
                        int64_t Offset = htobe64(offset++);
                        int32_t MessageSize;

                        memcpy(data + of, &Offset, sizeof(Offset));
                        memcpy(&MessageSize,
                               data + of + RD_KAFKAP_MSGSET_V0_OF_MessageSize,
                               sizeof(MessageSize));
                        MessageSize = be32toh(MessageSize);
                        of += RD_KAFKAP_MESSAGESET_V0_HDR_SIZE +
                              (size_t)MessageSize;
                }
OLD
                /* kafka-mirror test bed: legacy message sets. Offsets were
                 * assigned by kmirror_legacy_assign() before the copy. */
NEW

replace_once(\$src, <<'OLD', <<'NEW', "log_append's legacy branch");
                err = rd_kafka_mock_msgset_legacy_count(
                    rkbuf, RD_KAFKAP_BYTES_LEN(records), &legacy_msgcnt);
                if (err)
                        goto err;

                rd_kafka_buf_destroy(rkbuf);

                mset = rd_kafka_mock_msgset_new(mpart, records, legacy_msgcnt,
                                                MagicByte);
OLD
                rd_kafkap_bytes_t assigned;

                err = rd_kafka_mock_msgset_legacy_count(
                    rkbuf, RD_KAFKAP_BYTES_LEN(records), &legacy_msgcnt);
                if (err && err != RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION)
                        goto err;
                /* kafka-mirror test bed: legacy message sets, compressed
                 * wrappers included, with Kafka's offsets. */
                err = kmirror_legacy_assign(mpart, records, &assigned,
                                            &legacy_msgcnt);
                if (err)
                        goto err;

                rd_kafka_buf_destroy(rkbuf);

                mset = rd_kafka_mock_msgset_new(mpart, &assigned, legacy_msgcnt,
                                                MagicByte);
                rd_free((void *)assigned.data);
NEW

my $helpers = <<'C';
/* kafka-mirror test bed: legacy message sets.
 * Offsets for a legacy (v0/v1) message set as Kafka's LogValidator assigns them, written into
 * a copy (\p out, freed by the caller): see testbed/mock-kafka/patch-legacy-msgset.pl. */
typedef struct kmirror_out_s {
        char *p;
        size_t len, cap;
} kmirror_out_t;

static void kmirror_put(kmirror_out_t *o, const void *d, size_t n) {
        if (o->len + n > o->cap) {
                o->cap = (o->len + n) * 2 + 64;
                o->p   = rd_realloc(o->p, o->cap);
        }
        memcpy(o->p + o->len, d, n);
        o->len += n;
}

static int32_t kmirror_get32(const char *p) {
        uint32_t v;
        memcpy(&v, p, 4);
        return (int32_t)be32toh(v);
}

static int64_t kmirror_get64(const char *p) {
        uint64_t v;
        memcpy(&v, p, 8);
        return (int64_t)be64toh(v);
}

static void kmirror_set32(char *p, uint32_t v) {
        v = htobe32(v);
        memcpy(p, &v, 4);
}

static void kmirror_set64(char *p, int64_t v) {
        uint64_t b = htobe64((uint64_t)v);
        memcpy(p, &b, 8);
}

/* gzip (or zlib) stream to bytes; NULL when it is not one. */
static char *kmirror_gunzip(const char *in, size_t len, size_t *outlenp) {
        z_stream s;
        size_t cap = len * 4 + 1024;
        char *out;
        int r;

        memset(&s, 0, sizeof(s));
        if (inflateInit2(&s, 15 + 32) != Z_OK)
                return NULL;
        out        = rd_malloc(cap);
        s.next_in  = (Bytef *)in;
        s.avail_in = (uInt)len;
        for (;;) {
                if (s.total_out == cap) {
                        cap *= 2;
                        out = rd_realloc(out, cap);
                }
                s.next_out  = (Bytef *)out + s.total_out;
                s.avail_out = (uInt)(cap - s.total_out);
                r           = inflate(&s, Z_NO_FLUSH);
                if (r == Z_STREAM_END)
                        break;
                if (r != Z_OK && !(r == Z_BUF_ERROR && s.avail_out == 0)) {
                        inflateEnd(&s);
                        rd_free(out);
                        return NULL;
                }
        }
        *outlenp = s.total_out;
        inflateEnd(&s);
        return out;
}

/* Raw snappy (what librdkafka writes) or the xerial framing (the Java client's). */
static char *kmirror_unsnappy(const char *in, size_t len, size_t *outlenp) {
        char errstr[128];
        size_t n;
        char *out;

        if (len >= 16 && !memcmp(in, "\x82SNAPPY\0", 8))
                return rd_kafka_snappy_java_uncompress(in, len, outlenp, errstr,
                                                       sizeof(errstr));
        if (!rd_kafka_snappy_uncompressed_length(in, len, &n))
                return NULL;
        out = rd_malloc(n ? n : 1);
        if (rd_kafka_snappy_uncompress(in, len, out)) {
                rd_free(out);
                return NULL;
        }
        *outlenp = n;
        return out;
}

/* An LZ4 frame; a v0 frame's wrong header checksum (KIP-57) is recomputed first, as
 * librdkafka's consumer does. */
static char *kmirror_unlz4(const char *in, size_t len, size_t *outlenp) {
        LZ4F_decompressionContext_t dctx;
        char *frame, *out;
        size_t hc = 6, of = 0, total = 0, cap = len * 4 + 1024;

        if (len < 7 || memcmp(in, "\x04\x22\x4d\x18", 4))
                return NULL;
        if (in[4] & 0x08)
                hc += 8;
        if (hc >= len)
                return NULL;
        frame = rd_malloc(len);
        memcpy(frame, in, len);
        frame[hc] = (char)((XXH32(frame + 4, hc - 4, 0) >> 8) & 0xff);
        if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
                rd_free(frame);
                return NULL;
        }
        out = rd_malloc(cap);
        for (;;) {
                size_t outsz = cap - total, insz = len - of;
                size_t r = LZ4F_decompress(dctx, out + total, &outsz,
                                           frame + of, &insz, NULL);
                if (LZ4F_isError(r)) {
                        rd_free(out);
                        out = NULL;
                        break;
                }
                total += outsz;
                of += insz;
                if (r == 0)
                        break;
                if (of >= len && outsz == 0) { /* truncated */
                        rd_free(out);
                        out = NULL;
                        break;
                }
                if (total == cap) {
                        cap *= 2;
                        out = rd_realloc(out, cap);
                }
        }
        LZ4F_freeDecompressionContext(dctx);
        rd_free(frame);
        *outlenp = total;
        return out;
}

static char *
kmirror_uncompress(int codec, const char *in, size_t len, size_t *outlenp) {
        switch (codec) {
        case 1:
                return kmirror_gunzip(in, len, outlenp);
        case 2:
                return kmirror_unsnappy(in, len, outlenp);
        case 3:
                return kmirror_unlz4(in, len, outlenp);
        default:
                return NULL;
        }
}

static char *kmirror_gzip(const char *in, size_t len, size_t *outlenp) {
        z_stream s;
        size_t cap;
        char *out;

        memset(&s, 0, sizeof(s));
        if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK)
                return NULL;
        cap         = deflateBound(&s, (uLong)len) + 64;
        out         = rd_malloc(cap);
        s.next_in   = (Bytef *)in;
        s.avail_in  = (uInt)len;
        s.next_out  = (Bytef *)out;
        s.avail_out = (uInt)cap;
        if (deflate(&s, Z_FINISH) != Z_STREAM_END) {
                deflateEnd(&s);
                rd_free(out);
                return NULL;
        }
        *outlenp = s.total_out;
        deflateEnd(&s);
        return out;
}

/* Walks the decompressed inner set \p d: each message whole, uncompressed, of the wrapper's
 * \p magic; v1 inner offsets must be 0..n-1; v0 inner offsets are set to base + i, or with
 * \p keep (no recompression) must already be base + i (UNSUPPORTED_VERSION otherwise). */
static rd_kafka_resp_err_t kmirror_inner(char *d,
                                         size_t dlen,
                                         int8_t magic,
                                         int64_t base,
                                         rd_bool_t keep,
                                         int64_t *np) {
        size_t of = 0;
        int64_t n = 0;

        while (of < dlen) {
                int32_t size;

                if (of + RD_KAFKAP_MESSAGE_V0_OVERHEAD > dlen)
                        return RD_KAFKA_RESP_ERR_INVALID_MSG;
                size = kmirror_get32(d + of + 8);
                if (size < RD_KAFKAP_MESSAGE_V0_HDR_SIZE ||
                    of + 12 + (size_t)size > dlen)
                        return RD_KAFKA_RESP_ERR_INVALID_MSG;
                if (d[of + 16] != magic || (d[of + 17] & 0x7))
                        return RD_KAFKA_RESP_ERR_INVALID_MSG;
                if (magic == 1 && kmirror_get64(d + of) != n)
                        return RD_KAFKA_RESP_ERR_INVALID_MSG;
                if (magic == 0 && keep && kmirror_get64(d + of) != base + n)
                        return RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION;
                if (magic == 0)
                        kmirror_set64(d + of, base + n);
                n++;
                of += 12 + (size_t)size;
        }
        if (n == 0)
                return RD_KAFKA_RESP_ERR_INVALID_MSG;
        *np = n;
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

/* One wrapper \p m of \p size bytes (offset and size fields included) compressed with
 * \p codec, appended to \p o with its inner messages numbered from \p base; *np is their
 * count. Only gzip v0 wrappers are recompressed: a snappy or lz4 v0 wrapper is taken only when
 * its inner offsets are already the absolute ones (the partition's first produce). */
static rd_kafka_resp_err_t kmirror_wrapper(kmirror_out_t *o,
                                           const char *m,
                                           size_t size,
                                           int codec,
                                           int64_t base,
                                           int64_t *np) {
        int8_t magic   = m[16];
        size_t keypos  = magic == 1 ? 26 : 18;
        int32_t keylen = kmirror_get32(m + keypos);
        size_t valpos  = keypos + 4 + (keylen > 0 ? (size_t)keylen : 0);
        int32_t vallen;
        char *inner, *packed;
        size_t innerlen, packedlen, start = o->len;
        rd_kafka_resp_err_t err;
        char field[4];

        if (valpos + 4 > size)
                return RD_KAFKA_RESP_ERR_INVALID_MSG;
        vallen = kmirror_get32(m + valpos);
        if (vallen < 0 || valpos + 4 + (size_t)vallen != size)
                return RD_KAFKA_RESP_ERR_INVALID_MSG;
        if (!(inner = kmirror_uncompress(codec, m + valpos + 4, (size_t)vallen,
                                         &innerlen)))
                return RD_KAFKA_RESP_ERR_INVALID_MSG;
        if ((err = kmirror_inner(inner, innerlen, magic, base, codec != 1, np))) {
                rd_free(inner);
                return err;
        }
        if (magic == 1 || codec != 1) {
                /* In place: inner bytes untouched, the wrapper's offset the last inner one's. */
                rd_free(inner);
                kmirror_put(o, m, size);
                kmirror_set64(o->p + start, base + *np - 1);
                return RD_KAFKA_RESP_ERR_NO_ERROR;
        }
        packed = kmirror_gzip(inner, innerlen, &packedlen);
        rd_free(inner);
        if (!packed)
                return RD_KAFKA_RESP_ERR_INVALID_MSG;
        kmirror_put(o, m, valpos); /* offset, size, crc, magic, attributes, key */
        kmirror_set32(field, (uint32_t)packedlen);
        kmirror_put(o, field, 4);
        kmirror_put(o, packed, packedlen);
        rd_free(packed);
        kmirror_set64(o->p + start, base + *np - 1);
        kmirror_set32(o->p + start + 8, (uint32_t)(o->len - start - 12));
        kmirror_set32(o->p + start + 12,
                      (uint32_t)crc32(0, (const Bytef *)o->p + start + 16,
                                      (uInt)(o->len - start - 16)));
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t
kmirror_legacy_assign(rd_kafka_mock_partition_t *mpart,
                      const rd_kafkap_bytes_t *records,
                      rd_kafkap_bytes_t *out,
                      size_t *msgcntp) {
        const char *in = records->data;
        size_t len     = (size_t)RD_KAFKAP_BYTES_LEN(records);
        size_t of      = 0;
        int64_t next   = mpart->end_offset;
        kmirror_out_t o = {NULL, 0, 0};
        rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;

        while (of < len && !err) {
                int32_t size;
                int8_t codec;
                int64_t n = 1;

                if (of + RD_KAFKAP_MESSAGE_V0_OVERHEAD > len) {
                        err = RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE;
                        break;
                }
                size  = kmirror_get32(in + of + 8);
                codec = in[of + 17] & 0x7;
                if (size < RD_KAFKAP_MESSAGE_V0_HDR_SIZE ||
                    of + 12 + (size_t)size > len)
                        err = RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE;
                else if (in[of + 16] > 1)
                        err = RD_KAFKA_RESP_ERR_INVALID_MSG;
                else if (codec == 0) {
                        size_t start = o.len;
                        kmirror_put(&o, in + of, 12 + (size_t)size);
                        kmirror_set64(o.p + start, next);
                } else if (codec <= 3)
                        err = kmirror_wrapper(&o, in + of, 12 + (size_t)size,
                                              codec, next, &n);
                else
                        err = RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION;
                next += n;
                of += 12 + (size_t)size;
        }
        if (!err && o.len == 0)
                err = RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE;
        if (err) {
                rd_free(o.p);
                return err;
        }
        out->data = o.p;
        out->len  = (int32_t)o.len;
        *msgcntp  = (size_t)(next - mpart->end_offset);
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

C

replace_once(\$src, <<'OLD', $helpers . <<'OLD', "log_append's definition");
/**
 * @brief Append the MessageSets in \p bytes to the \p mpart partition log.
OLD
/**
 * @brief Append the MessageSets in \p bytes to the \p mpart partition log.
OLD

write_patched($file, $src);
