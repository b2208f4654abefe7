#!/usr/bin/perl
# Makes the mock cluster keep a partition's whole log. librdkafka 2.15.1 hard-codes 5 MiB / 100k
# batches per partition and silently drops older batches beyond that, which would make a
# replication test lose data it never saw. The limits now come from MOCK_KAFKA_PARTITION_MAX_BYTES
# and MOCK_KAFKA_PARTITION_MAX_BATCHES (default: 4 GiB and 1e12). Dies when the source does not
# match the pinned version, so a version bump cannot silently skip the patch.
use strict;
use warnings;
use FindBin qw($Bin);
use lib $Bin;
use SourcePatch qw(source_to_patch write_patched);

my $file = shift or die "usage: patch-retention.pl src/rdkafka_mock.c\n";
my $src = source_to_patch($file, "MOCK_KAFKA_PARTITION_MAX_BYTES");

my $helper = <<'C';
/* kafka-mirror test bed: per-partition retention from the environment. */
static size_t mock_kafka_env_size(const char *name, size_t dflt) {
        const char *v = getenv(name);
        char *end     = NULL;
        unsigned long long n;
        if (!v || !*v)
                return dflt;
        n = strtoull(v, &end, 10);
        if (!end || *end || n == 0)
                return dflt;
        return (size_t)n;
}

static void rd_kafka_mock_partition_init(
C
chomp $helper;

my $n = ($src =~ s/static void rd_kafka_mock_partition_init\(/$helper/);
die "patch-retention: rd_kafka_mock_partition_init( not found in $file\n" unless $n == 1;

$n = ($src =~ s/mpart->max_size = 1024 \* 1024 \* 5;/mpart->max_size = mock_kafka_env_size("MOCK_KAFKA_PARTITION_MAX_BYTES", (size_t)4 << 30);/);
die "patch-retention: 'mpart->max_size = 1024 * 1024 * 5;' not found in $file\n" unless $n == 1;

$n = ($src =~ s/mpart->max_cnt  = 100000;/mpart->max_cnt  = mock_kafka_env_size("MOCK_KAFKA_PARTITION_MAX_BATCHES", (size_t)1000000000000ULL);/);
die "patch-retention: 'mpart->max_cnt  = 100000;' not found in $file\n" unless $n == 1;

write_patched($file, $src);
