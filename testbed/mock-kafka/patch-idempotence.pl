#!/usr/bin/perl
# Makes the mock cluster check the sequence numbers of idempotent producers, as a Kafka broker
# does. librdkafka 2.15.1's mock checks them only for transactional producers, so with an
# idempotent one it appends a batch whose sequence skips ahead (OUT_OF_ORDER_SEQUENCE_NUMBER on
# Kafka) and appends a resent batch again (a duplicate Kafka drops). The replicator's pipelined
# produce relies on the first, its retries on the second: without this a test could not tell a
# lost or reordered batch from a correct run. Dies when the source does not match the pinned
# version, so a version bump cannot silently skip the patch.
use strict;
use warnings;
use FindBin qw($Bin);
use lib $Bin;
use SourcePatch qw(source_to_patch write_patched);

my $file = shift or die "usage: patch-idempotence.pl src/rdkafka_mock.c\n";
my $src = source_to_patch($file, "kafka-mirror test bed: idempotent producers");

my $old_guard = <<'C';
        if (!TransactionalId || RD_KAFKAP_STR_LEN(TransactionalId) < 1)
                return RD_KAFKA_RESP_ERR_NO_ERROR;
C
my $new_guard = <<'C';
        /* kafka-mirror test bed: idempotent producers (a producer id, no
         * transactional id) have their sequences checked too, as on Kafka. */
        rd_bool_t idempotent_only = rd_false;
        if (!TransactionalId || RD_KAFKAP_STR_LEN(TransactionalId) < 1) {
                int64_t ProducerId = -1;
                rd_kafka_buf_peek_i64(rkbuf, RD_KAFKAP_MSGSET_V2_OF_ProducerId,
                                      &ProducerId);
                if (ProducerId < 0)
                        return RD_KAFKA_RESP_ERR_NO_ERROR;
                idempotent_only = rd_true;
        }
C
my $n = ($src =~ s/\Q$old_guard\E/$new_guard/);
die "patch-idempotence: the transactional-only guard was not found in $file\n" unless $n == 1;

my $old_find = "err = rd_kafka_mock_pid_find(mcluster, TransactionalId, pid, &mpid);";
my $new_find = "err = rd_kafka_mock_pid_find(\n            mcluster, idempotent_only ? NULL : TransactionalId, pid, &mpid);";
$n = ($src =~ s/\Q$old_find\E/$new_find/);
die "patch-idempotence: the pid lookup was not found in $file\n" unless $n == 1;

# The failure log prints the transactional id, which an idempotent producer does not have.
my $old_log = "RD_KAFKAP_STR_PR(TransactionalId),\n                             mpid ?";
my $new_log = "idempotent_only ? 0 : RD_KAFKAP_STR_LEN(TransactionalId),\n                             idempotent_only ? \"\" : TransactionalId->str,\n                             mpid ?";
$n = ($src =~ s/\Q$old_log\E/$new_log/);
die "patch-idempotence: the failure log was not found in $file\n" unless $n == 1;

# A duplicate is acknowledged without touching the sequence window: upstream recorded it as the
# latest batch, so the expected sequence moved back to just after it, and in a run of resent
# batches the next-but-one was appended again (Kafka drops every batch of such a run).
my $old_window = "        /* Update BaseSequence window */\n";
my $new_window = "        /* kafka-mirror test bed: a duplicate leaves the window as it is. */\n"
    . "        if (*is_dupd)\n"
    . "                return RD_KAFKA_RESP_ERR_NO_ERROR;\n\n"
    . $old_window;
$n = ($src =~ s/\Q$old_window\E/$new_window/);
die "patch-idempotence: the sequence window update was not found in $file\n" unless $n == 1;

write_patched($file, $src);
