#!/usr/bin/perl
# Makes the mock cluster's COMMIT/ABORT control batches what Kafka writes
# (MemoryRecords.withEndTransactionMarker). librdkafka 2.15.1's
# rd_kafka_mock_partition_write_control_batch (src/rdkafka_mock.c) lays out magic 2, attributes
# transactional|control (0x30), the transaction's producer id and epoch, one record keyed
# version 0 + type (0 abort, 1 commit) and valued version 0 + coordinatorEpoch 0, as Kafka does,
# but differs in three fields:
#  - CRC 0 instead of the CRC-32C of attributes..end, so any client that checks CRCs (ours does;
#    librdkafka and kcat do not by default, check.crcs=false) refuses the batch as corrupt;
#  - BaseSequence 0 instead of -1 (NO_SEQUENCE: a marker is no part of the producer's sequence);
#  - BaseTimestamp/MaxTimestamp 0 instead of the time the marker was written.
# The CRC is computed last, over bytes 21..end; msgset_new later sets BaseOffset and
# PartitionLeaderEpoch, which lie before it and are not covered.
# Dies when the source does not match the pinned version. Idempotent: a patched file is left alone.
use strict;
use warnings;
use FindBin qw($Bin);
use lib $Bin;
use SourcePatch qw(source_to_patch replace_once write_patched);

my $file = shift or die "usage: patch-control-batch.pl <librdkafka>/src/rdkafka_mock.c\n";
my $marker = "kafka-mirror test bed: control batch";

my $src = source_to_patch($file, $marker);

replace_once(\$src, <<'OLD', <<'NEW', "the includes");
#include "rdkafka_mock.h"
#include "rdunittest.h"
OLD
#include "rdkafka_mock.h"
#include "rdunittest.h"
#include "crc32c.h" /* kafka-mirror test bed: control batch CRC */
NEW

replace_once(\$src, <<'OLD', <<'NEW', "the layout comment's CRC, timestamps and BaseSequence");
         * 17: CRC                     (i32) = 0 (mock doesn't validate CRC)
OLD
         * 17: CRC                     (u32) = CRC-32C of bytes 21..end
         *     (kafka-mirror test bed: control batch. Kafka's, so clients
         *     that check CRCs accept it; also BaseTimestamp = MaxTimestamp
         *     = now and BaseSequence = -1 below, as Kafka writes them.)
NEW

replace_once(\$src, <<'OLD', <<'NEW', "the CRC placeholder");
        /* CRC = 0 (mock doesn't validate) */
OLD
        /* CRC: computed last, below. */
NEW

replace_once(\$src, <<'OLD', <<'NEW', "the zero timestamps");
        /* BaseTimestamp = 0, MaxTimestamp = 0 (already zeroed) */
OLD
        /* BaseTimestamp = MaxTimestamp = now (ms): Kafka stamps a marker
         * with the time it writes it; the record's TimestampDelta stays 0. */
        i64val = htobe64(rd_uclock() / 1000);
        memcpy(buf + 27, &i64val, 8);
        memcpy(buf + 35, &i64val, 8);
NEW

replace_once(\$src, <<'OLD', <<'NEW', "the zero BaseSequence");
        /* BaseSequence = 0 (already zeroed) */
OLD
        /* BaseSequence = -1 (RecordBatch.NO_SEQUENCE), as on Kafka */
        i32val = htobe32(-1);
        memcpy(buf + 53, &i32val, 4);
NEW

replace_once(\$src, <<'OLD', <<'NEW', "the end of the control batch");
        /* Record: HeadersCount=0 (already zeroed at 77) */

        bytes.len  = sizeof(buf);
OLD
        /* Record: HeadersCount=0 (already zeroed at 77) */

        /* CRC-32C of Attributes..end, as Kafka (DefaultRecordBatch) and
         * librdkafka's own msgset writer compute it. */
        i32val = (int32_t)htobe32(rd_crc32c(0, buf + 21, sizeof(buf) - 21));
        memcpy(buf + 17, &i32val, 4);

        bytes.len  = sizeof(buf);
NEW

write_patched($file, $src);
