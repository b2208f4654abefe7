#!/usr/bin/perl
# Answers a held Fetch as soon as its broker's log changes, as Kafka's DelayedFetch does. A Fetch
# that finds no data waits up to its MaxWait; Kafka completes it early once a produce (or a
# transaction marker moving the last stable offset) gives it something to return. librdkafka
# 2.15.1's mock builds the empty answer at once and holds it for the whole MaxWait
# (rdkafka_mock_handlers.c, "If there was no data, delay up to MaxWait"), so a record written
# meanwhile waits up to MaxWait (500 ms at our defaults) before its reader sees it, and a
# latency measured on the mock measures that wait.
#
# With MOCK_KAFKA_FETCH_WAKEUP=1 in the mock's environment, every change of a partition's last
# stable offset (rd_kafka_mock_partition_update_lso: after each append, and when a transaction
# ends) releases the held Fetch answers on the partition leader's connections at once. The
# answer released is still the empty one: the reader fetches again and gets the data one round
# trip later, where Kafka would have answered with it. Answers of fetches for other partitions of
# that broker are released too (the held answer does not record what was asked); their readers
# fetch again and are held again. Unset, the mock holds them as upstream does.
# Dies when the source does not match the pinned version. Idempotent: a patched file is left alone.
use strict;
use warnings;
use FindBin qw($Bin);
use lib $Bin;
use SourcePatch qw(source_to_patch write_patched);

my $file = shift or die "usage: patch-fetch-wakeup.pl <librdkafka>/src/rdkafka_mock.c\n";
my $marker = "kmirror_wake_held_fetches";

my $src = source_to_patch($file, $marker);

my $declaration = <<'C';
/* kafka-mirror test bed: held Fetch answers released when the log changes. */
static void kmirror_wake_held_fetches(rd_kafka_mock_partition_t *mpart);

void rd_kafka_mock_partition_update_lso(rd_kafka_mock_partition_t *mpart,
C
my $n = ($src =~ s/^void rd_kafka_mock_partition_update_lso\(rd_kafka_mock_partition_t \*mpart,\n/$declaration/m);
die "patch-fetch-wakeup: rd_kafka_mock_partition_update_lso( not found in $file\n" unless $n == 1;

$n = ($src =~ s/(\n        mpart->lso = min_offset;\n)(\})/$1        kmirror_wake_held_fetches(mpart);\n$2/);
die "patch-fetch-wakeup: 'mpart->lso = min_offset;' not found in $file\n" unless $n == 1;

my $function = <<'C';

/* kafka-mirror test bed: see testbed/mock-kafka/patch-fetch-wakeup.pl. */
static void kmirror_wake_held_fetches(rd_kafka_mock_partition_t *mpart) {
        static int enabled = -1;
        rd_kafka_mock_broker_t *mrkb = mpart->leader;
        rd_kafka_mock_connection_t *mconn;
        rd_ts_t now;

        if (enabled == -1) {
                const char *v = getenv("MOCK_KAFKA_FETCH_WAKEUP");
                enabled       = v && !strcmp(v, "1");
        }
        if (!enabled || !mrkb)
                return;
        now = rd_clock();
        TAILQ_FOREACH(mconn, &mrkb->connections, link) {
                rd_kafka_buf_t *rkbuf;
                rd_bool_t released = rd_false;
                TAILQ_FOREACH(rkbuf, &mconn->outbufs.rkbq_bufs, rkbuf_link) {
                        /* Only an empty Fetch answer is held with rkbuf_ts_retry. */
                        if (rkbuf->rkbuf_reqhdr.ApiKey == RD_KAFKAP_Fetch &&
                            rkbuf->rkbuf_ts_retry > now) {
                                rkbuf->rkbuf_ts_retry = 0;
                                released              = rd_true;
                        }
                }
                if (released)
                        rd_kafka_timer_start_oneshot(
                            &mrkb->cluster->timers, &mconn->write_tmr, rd_true,
                            1, rd_kafka_mock_connection_write_out_tmr_cb, mconn);
        }
}
C
$n = ($src =~ s/(static void rd_kafka_mock_connection_write_out_tmr_cb\(rd_kafka_timers_t \*rkts,\n\s+void \*arg\) \{\n.*?\n\}\n)/$1$function/s);
die "patch-fetch-wakeup: rd_kafka_mock_connection_write_out_tmr_cb not found in $file\n" unless $n == 1;

write_patched($file, $src);
