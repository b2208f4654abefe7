#!/usr/bin/perl
# Makes the mock cluster's classic consumer groups empty out, complete rebalances and accept
# admin commits as Kafka's group coordinator does. librdkafka 2.15.1's mock:
#  1. keeps a group whose last member left (LeaveGroup or session timeout) rebalancing for the
#     session timeout minus 1 s (44 s with librdkafka's default 45 s) before it becomes Empty, so
#     the next consumer of that group id waits that long for its assignment; Kafka completes the
#     rebalance at once when no member is left: the group is Empty (generation + 1) and a new
#     member is assigned without delay. Failover tests reuse group ids.
#  2. waits, when a member joins or leaves a group that has other members, the same 44 s for
#     them to rejoin before it completes the join, even once every member has rejoined; Kafka
#     completes it as soon as all known members have joined (GroupCoordinator's
#     hasAllMembersJoined), so a second consumer is assigned partitions within a heartbeat. The
#     initial delay of an Empty group's first join (group.initial.rebalance.delay.ms) is kept.
#  3. refuses an admin OffsetCommit (generation -1, no member id: Kafka's AdminClient
#     alterConsumerGroupOffsets, kafka-consumer-groups --reset-offsets) with UNKNOWN_MEMBER_ID
#     for every group that ever had a member, Empty or not; Kafka accepts it while the group is
#     Empty (GroupCoordinator.doCommitOffsets: generationId < 0 && group.is(Empty)) and answers
#     UNKNOWN_MEMBER_ID while it has members, which the mock already does.
# Dies when the source does not match the pinned version, so a version bump cannot silently skip
# the patch.
use strict;
use warnings;

my $dir = shift or die "usage: patch-groups.pl librdkafka/src\n";

sub patch_file {
    my ($file, $marker, @edits) = @_;
    open(my $in, "<", $file) or die "cannot read $file: $!\n";
    my $src = do { local $/; <$in> };
    close($in);
    return if $src =~ /\Q$marker\E/;
    while (my ($old, $new) = splice(@edits, 0, 2)) {
        my $n = ($src =~ s/\Q$old\E/$new/);
        die "patch-groups: expected text not found in $file:\n$old\n" unless $n == 1;
    }
    open(my $out, ">", $file) or die "cannot write $file: $!\n";
    print $out $src;
    close($out);
}

my $old_rebalance = <<'C';
        int timeout_ms;

        if (mcgrp->state == RD_KAFKA_MOCK_CGRP_STATE_JOINING)
                return; /* Do nothing, group is already rebalancing. */
C
my $new_rebalance = <<'C';
        int timeout_ms;

        /* kafka-mirror test bed: groups empty out at once. With no member
         * left there is nobody to wait for: Kafka completes the rebalance
         * now, bumps the generation and the group is Empty, so the next
         * member's join is not held up. */
        if (mcgrp->member_cnt == 0) {
                if (mcgrp->state == RD_KAFKA_MOCK_CGRP_STATE_SYNCING)
                        rd_kafka_mock_cgrp_classic_sync_done(
                            mcgrp, RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS);
                rd_kafka_timer_stop(&mcgrp->cluster->timers,
                                    &mcgrp->rebalance_tmr, rd_true);
                if (mcgrp->state != RD_KAFKA_MOCK_CGRP_STATE_EMPTY)
                        mcgrp->generation_id++;
                rd_kafka_mock_cgrp_classic_set_state(
                    mcgrp, RD_KAFKA_MOCK_CGRP_STATE_EMPTY, reason);
                return;
        }

        if (mcgrp->state == RD_KAFKA_MOCK_CGRP_STATE_JOINING)
                return; /* Do nothing, group is already rebalancing. */
C
my $old_join_start = <<'C';
        if (mcgrp->state != RD_KAFKA_MOCK_CGRP_STATE_JOINING)
                rd_kafka_mock_cgrp_classic_rebalance(mcgrp, "member join");
C
my $new_join_start = <<'C';
        /* kafka-mirror test bed: see the end of this function. */
        rd_bool_t was_empty = mcgrp->state == RD_KAFKA_MOCK_CGRP_STATE_EMPTY;
        if (mcgrp->state != RD_KAFKA_MOCK_CGRP_STATE_JOINING)
                rd_kafka_mock_cgrp_classic_rebalance(mcgrp, "member join");
C
my $old_join_end = <<'C';
        rd_assert(!member->resp);
        member->resp = resp;
        member->conn = mconn;
        rd_kafka_mock_cgrp_classic_member_active(mcgrp, member);

        return RD_KAFKA_RESP_ERR_NO_ERROR;
C
my $new_join_end = <<'C';
        rd_assert(!member->resp);
        member->resp = resp;
        member->conn = mconn;
        rd_kafka_mock_cgrp_classic_member_active(mcgrp, member);

        /* kafka-mirror test bed: once every member has (re)joined there
         * is nobody left to wait for: complete the join now, as Kafka
         * does, instead of after the session timeout. An Empty group's
         * first join keeps its initial delay. */
        if (!was_empty && mcgrp->state == RD_KAFKA_MOCK_CGRP_STATE_JOINING) {
                rd_kafka_mock_cgrp_classic_member_t *other;
                rd_bool_t all_joined = rd_true;
                TAILQ_FOREACH(other, &mcgrp->members, link)
                if (!other->resp)
                        all_joined = rd_false;
                if (all_joined)
                        rd_kafka_mock_cgrp_classic_rebalance_timer_restart(mcgrp, 0);
        }

        return RD_KAFKA_RESP_ERR_NO_ERROR;
C
patch_file("$dir/rdkafka_mock_cgrp.c", "kafka-mirror test bed: groups empty out at once",
           $old_rebalance, $new_rebalance, $old_join_start, $new_join_start, $old_join_end, $new_join_end);

my $old_commit = <<'C';
                mcgrp_classic =
                    rd_kafka_mock_cgrp_classic_find(mcluster, &GroupId);
                if (mcgrp_classic) {
C
my $new_commit = <<'C';
                mcgrp_classic =
                    rd_kafka_mock_cgrp_classic_find(mcluster, &GroupId);
                if (mcgrp_classic && GenerationIdOrMemberEpoch < 0 &&
                    mcgrp_classic->state == RD_KAFKA_MOCK_CGRP_STATE_EMPTY) {
                        /* kafka-mirror test bed: admin commit to an Empty
                         * group, accepted as by Kafka's coordinator. */
                } else if (mcgrp_classic) {
C
patch_file("$dir/rdkafka_mock_handlers.c", "kafka-mirror test bed: admin commit to an Empty",
           $old_commit, $new_commit);
