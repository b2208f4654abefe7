#!/usr/bin/perl
# Makes the mock cluster check a produced batch's CRC, as Kafka does. Kafka's broker validates
# every v2 batch it is sent (LogValidator: RecordBatch.ensureValid) and refuses one whose CRC-32C
# of bytes 21..end (attributes to the last record) is not its CRC field with CORRUPT_MESSAGE.
# librdkafka 2.15.1's rd_kafka_mock_partition_log_append (src/rdkafka_mock.c) stores whatever it
# is sent, so a writer that corrupts a batch (a buffer reused too early, a CRC computed over the
# wrong bytes) passed on the mock and failed only on real Kafka. Checked here: the first v2
# batch of the request (Kafka takes one per partition), before its sequence and before anything
# is stored; legacy v0/v1 message sets (CRC-32 per message) are left as they are.
# Dies when the source does not match the pinned version. Idempotent: a patched file is left alone.
use strict;
use warnings;
use FindBin qw($Bin);
use lib $Bin;
use SourcePatch qw(source_to_patch replace_once write_patched);

my $file = shift or die "usage: patch-produce-crc.pl <librdkafka>/src/rdkafka_mock.c\n";
my $marker = "kafka-mirror test bed: produce CRC";

my $src = source_to_patch($file, $marker);

replace_once(\$src, <<'OLD', <<'NEW', "the includes");
#include "rdunittest.h"
OLD
#include "rdunittest.h"
#include "crc32c.h" /* kafka-mirror test bed: produce CRC */
NEW

replace_once(\$src, <<'OLD', <<'NEW', "the sequence check in log_append");
        if ((err = rd_kafka_mock_validate_records(
                 mpart, rkbuf, (size_t)RecordCount, TransactionalId, &is_dup)))
                goto err;
OLD
        /* kafka-mirror test bed: produce CRC. As Kafka's
         * RecordBatch.ensureValid: the batch must fit the request, and its
         * CRC-32C of bytes 21..end must be its CRC field. */
        {
                int32_t BatchLength = 0, Crc = 0;
                size_t size         = (size_t)RD_KAFKAP_BYTES_LEN(records);
                rd_kafka_buf_peek_i32(rkbuf, RD_KAFKAP_MSGSET_V2_OF_Length,
                                      &BatchLength);
                rd_kafka_buf_peek_i32(rkbuf, RD_KAFKAP_MSGSET_V2_OF_CRC, &Crc);
                if (BatchLength < 49 || (size_t)BatchLength + 12 > size ||
                    rd_crc32c(0, (const char *)records->data + 21,
                              (size_t)BatchLength + 12 - 21) !=
                        (uint32_t)Crc) {
                        err = RD_KAFKA_RESP_ERR_INVALID_MSG; /* 2: CORRUPT_MESSAGE */
                        goto err;
                }
        }

        if ((err = rd_kafka_mock_validate_records(
                 mpart, rkbuf, (size_t)RecordCount, TransactionalId, &is_dup)))
                goto err;
NEW

write_patched($file, $src);
