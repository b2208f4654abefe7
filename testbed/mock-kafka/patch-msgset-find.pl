#!/usr/bin/perl
# Finds the message set holding an offset from the nearer end of the partition's log.
# librdkafka 2.15.1's mock walks every partition log from its first message set on each Fetch
# (rd_kafka_mock_msgset_find, "FIXME: Maintain an index"), so a reader at the end of a log of N
# message sets costs O(N) per fetch. Kafka finds the segment and position by its offset index.
# A log of small batches grows by thousands of message sets a minute (bench --copy batches: each
# source batch a target batch, and a commit marker per transaction), and within a 20-second
# latency run the mock's search took 43% of the machine's CPU and the latency grew with the log
# (p99 2-3 s, the mock's, not the mirror's).
#
# Message sets are appended at increasing offsets and removed from the head only
# (rd_kafka_mock_msgset_new, rd_kafka_mock_msgset_destroy), so their ranges are disjoint and in
# order: the walk from the tail finds the same one, and stops at the first set below the offset.
# Dies when the source does not match the pinned version. Idempotent: a patched file is left alone.
use strict;
use warnings;
use FindBin qw($Bin);
use lib $Bin;
use SourcePatch qw(source_to_patch write_patched);

my $file = shift or die "usage: patch-msgset-find.pl <librdkafka>/src/rdkafka_mock.c\n";
my $marker = "kafka-mirror test bed: msgset_find from the nearer end";

my $src = source_to_patch($file, $marker);

my $old = <<'C';
        /* FIXME: Maintain an index */

        TAILQ_FOREACH(mset, &mpart->msgsets, link) {
C
my $new = <<'C';
        /* kafka-mirror test bed: msgset_find from the nearer end. Sets
         * are in offset order and disjoint: see patch-msgset-find.pl. */
        if (offset - mpart->start_offset > mpart->end_offset - offset) {
                TAILQ_FOREACH_REVERSE(mset, &mpart->msgsets,
                                      rd_kafka_mock_msgset_tailq_s, link) {
                        if (mset->last_offset < offset)
                                return NULL;
                        if (mset->first_offset <= offset)
                                return mset;
                }
                return NULL;
        }

        TAILQ_FOREACH(mset, &mpart->msgsets, link) {
C
my $n = ($src =~ s/\Q$old\E/$new/);
die "patch-msgset-find: the linear search of rd_kafka_mock_msgset_find not found in $file\n" unless $n == 1;

write_patched($file, $src);
