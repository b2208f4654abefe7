#!/usr/bin/perl
# Makes the mock cluster fence transactional producers and honour read_committed, as Kafka does.
# librdkafka 2.15.1's mock gives every InitProducerId a NEW producer id, so an old holder of a
# transactional.id keeps writing next to the new one; and its classic Fetch ignores the
# isolation level (LastStableOffset = log end, no aborted transactions). With this patch:
#  - InitProducerId for a transactional.id that has a producer keeps that producer id and bumps
#    its epoch (a new id with epoch 0 once the epoch is exhausted). If the producer has an open
#    transaction, the epoch is bumped, the transaction aborted with it (abort markers, aborted
#    ranges, LSO, exactly as EndTxn(abort)) and CONCURRENT_TRANSACTIONS returned, so the client
#    retries and gets the epoch bumped once more: Kafka's PrepareEpochFence.
#  - A Produce with an older epoch is refused with INVALID_PRODUCER_EPOCH before any sequence
#    check (upstream let OUT_OF_ORDER_SEQUENCE_NUMBER overwrite it).
#  - Fetch with READ_COMMITTED answers the real LSO, no batch at or past it, and the aborted
#    transactions overlapping the returned batch; ListOffsets READ_COMMITTED LATEST answers the LSO.
# AddPartitionsToTxn/AddOffsetsToTxn/EndTxn/TxnOffsetCommit already refuse a stale epoch
# (INVALID_PRODUCER_EPOCH, what Kafka answers at the API versions the mock supports).
# Dies when the source does not match the pinned version, so a version bump cannot silently skip
# the patch. Idempotent: a patched file is left alone.
use strict;
use warnings;

my $dir = shift or die "usage: patch-transactions.pl <librdkafka>/src\n";
my $marker = "kafka-mirror test bed: transactions";

sub slurp {
    my ($file) = @_;
    open(my $in, "<", $file) or die "cannot read $file: $!\n";
    my $src = do { local $/; <$in> };
    close($in);
    return $src;
}

sub spew {
    my ($file, $src) = @_;
    open(my $out, ">", $file) or die "cannot write $file: $!\n";
    print $out $src;
    close($out) or die "cannot write $file: $!\n";
}

# Replaces exactly one occurrence of $old in $$src (or in the part of it $$src is).
sub replace_once {
    my ($src, $old, $new, $what) = @_;
    my $n = () = $$src =~ /\Q$old\E/g;
    die "patch-transactions: $what not found exactly once (found $n)\n" unless $n == 1;
    $$src =~ s/\Q$old\E/$new/;
}

# Applies $edit to the text of one C function, from its signature to the next one's.
sub in_function {
    my ($src, $start, $end, $edit) = @_;
    my $from = index($$src, $start);
    die "patch-transactions: function '$start' not found\n" if $from < 0;
    my $to = index($$src, $end, $from + length($start));
    die "patch-transactions: '$end' not found after '$start'\n" if $to < 0;
    my $body = substr($$src, $from, $to - $from);
    $edit->(\$body);
    substr($$src, $from, $to - $from) = $body;
}

patch_mock("$dir/rdkafka_mock.c");
patch_handlers("$dir/rdkafka_mock_handlers.c");

sub patch_mock {
    my ($file) = @_;
    my $src = slurp($file);
    return if $src =~ /\Q$marker\E/;
    replace_once(\$src, <<'OLD', <<'NEW', "the BaseSequence window check");
                if (BaseSequence < mpidstate->seq[mpidstate->lo])
OLD
                /* kafka-mirror test bed: transactions. A fenced (older) epoch
                 * is refused as such, as on Kafka, not as a sequence error. */
                if (err)
                        ;
                else if (BaseSequence < mpidstate->seq[mpidstate->lo])
NEW
    spew($file, $src);
}

sub patch_handlers {
    my ($file) = @_;
    my $src = slurp($file);
    return if $src =~ /\Q$marker\E/;
    patch_fetch(\$src);
    patch_list_offsets(\$src);
    patch_end_txn(\$src);
    patch_init_producer_id(\$src);
    spew($file, $src);
}

sub patch_fetch {
    my ($src) = @_;
    my $helper = <<'C';
/* kafka-mirror test bed: transactions. The aborted transactions (producer id,
 * first offset) overlapping the batch a read_committed Fetch returns, so the
 * client can drop their records, as Kafka's FetchResponse lists them. */
static void
rd_kafka_mock_Fetch_write_aborted(rd_kafka_buf_t *resp,
                                  rd_kafka_mock_partition_t *mpart,
                                  const rd_kafka_mock_msgset_t *mset) {
        rd_kafka_mock_aborted_txn_t *mabort;
        size_t cnt = 0;

#define KMIRROR_OVERLAPS(mabort)                                               \
        ((mabort)->last_offset + 1 >= mset->first_offset &&                    \
         (mabort)->first_offset <= mset->last_offset)
        if (mpart && mset) {
                TAILQ_FOREACH(mabort, &mpart->aborted_txns, link)
                if (KMIRROR_OVERLAPS(mabort))
                        cnt++;
        }
        rd_kafka_buf_write_arraycnt(resp, cnt);
        if (cnt == 0)
                return;
        TAILQ_FOREACH(mabort, &mpart->aborted_txns, link) {
                if (!KMIRROR_OVERLAPS(mabort))
                        continue;
                rd_kafka_buf_write_i64(resp, mabort->pid_id);
                rd_kafka_buf_write_i64(resp, mabort->first_offset);
                rd_kafka_buf_write_tags_empty(resp);
        }
#undef KMIRROR_OVERLAPS
}

/**
 * @brief Handle FetchRequest
 */
static int rd_kafka_mock_handle_Fetch(
C
    chomp $helper;
    replace_once($src, "/**\n * \@brief Handle FetchRequest\n */\nstatic int rd_kafka_mock_handle_Fetch(",
                 $helper, "the Fetch handler");

    in_function($src, "static int rd_kafka_mock_handle_Fetch(rd_kafka_mock_connection_t",
                "static int rd_kafka_mock_handle_ListOffsets(", sub {
        my ($body) = @_;
        # Before v4 there is no isolation level: READ_UNCOMMITTED.
        replace_once($body, "        int8_t IsolationLevel;\n",
                     "        int8_t IsolationLevel = 0;\n", "Fetch's IsolationLevel");
        replace_once($body, <<'OLD', <<'NEW', "Fetch's ErrorCode");
                        /* Response: ErrorCode */
                        rd_kafka_buf_write_i16(resp, err);
OLD
                        /* kafka-mirror test bed: transactions. read_committed
                         * returns nothing at or past the last stable offset
                         * (batches never straddle it: it is a batch start). */
                        if (mset && IsolationLevel == 1 &&
                            mset->first_offset >= mpart->lso)
                                mset = NULL;

                        /* Response: ErrorCode */
                        rd_kafka_buf_write_i16(resp, err);
NEW
        replace_once($body, <<'OLD', <<'NEW', "Fetch's LastStableOffset");
                                /* Response: LastStableOffset */
                                rd_kafka_buf_write_i64(
                                    resp, mpart ? mpart->end_offset : -1);
OLD
                                /* Response: LastStableOffset */
                                rd_kafka_buf_write_i64(
                                    resp,
                                    !mpart ? -1
                                    : IsolationLevel != 1
                                        ? mpart->end_offset
                                        : RD_MIN(mpart->lso,
                                                 on_follower
                                                     ? mpart->follower_end_offset
                                                     : mpart->end_offset));
NEW
        replace_once($body, <<'OLD', <<'NEW', "Fetch's #Aborted");
                                /* Response: #Aborted */
                                rd_kafka_buf_write_arraycnt(resp, 0);
OLD
                                /* Response: #Aborted: only for the batch
                                 * actually returned below (no data when a
                                 * preferred replica is named or no room). */
                                rd_bool_t kmirror_no_data =
                                    rkbuf->rkbuf_reqhdr.ApiVersion >= 11 &&
                                    mpart && mpart->leader == mconn->broker &&
                                    mpart->follower_id != -1;
                                rd_kafka_mock_Fetch_write_aborted(
                                    resp, mpart,
                                    IsolationLevel == 1 && !kmirror_no_data &&
                                            PartMaxBytes > 0 &&
                                            totsize < (size_t)MaxBytes
                                        ? mset
                                        : NULL);
NEW
    });
}

sub patch_list_offsets {
    my ($src) = @_;
    in_function($src, "static int rd_kafka_mock_handle_ListOffsets(rd_kafka_mock_connection_t",
                "static int rd_kafka_mock_handle_OffsetFetch(", sub {
        my ($body) = @_;
        replace_once($body, "        int8_t IsolationLevel;\n",
                     "        int8_t IsolationLevel = 0;\n", "ListOffsets' IsolationLevel");
        replace_once($body, <<'OLD', <<'NEW', "ListOffsets' latest offset");
                                else if (Timestamp == RD_KAFKA_OFFSET_END)
                                        Offset = mpart->end_offset;
OLD
                                else if (Timestamp == RD_KAFKA_OFFSET_END)
                                        /* kafka-mirror test bed: transactions.
                                         * read_committed's end is the LSO. */
                                        Offset = IsolationLevel == 1
                                                     ? mpart->lso
                                                     : mpart->end_offset;
NEW
    });
}

# Moves EndTxn's commit/abort work into a function InitProducerId can call too, so a fenced
# transaction is aborted by the very code EndTxn(abort) runs.
sub patch_end_txn {
    my ($src) = @_;
    my $block;
    my $from = index($$src, "static int rd_kafka_mock_handle_EndTxn(rd_kafka_mock_connection_t");
    die "patch-transactions: EndTxn handler not found\n" if $from < 0;
    my $start_text = "                /* For each partition in the transaction, write a control\n";
    my $end_text = "                rd_kafka_mock_txn_partitions_clear(mtxn);\n";
    my $s = index($$src, $start_text, $from);
    die "patch-transactions: EndTxn's control batch loop not found\n" if $s < 0;
    my $e = index($$src, $end_text, $s);
    die "patch-transactions: EndTxn's partitions_clear not found\n" if $e < 0;
    $e += length($end_text);
    $block = substr($$src, $s, $e - $s);
    substr($$src, $s, $e - $s) =
        "                /* kafka-mirror test bed: transactions (moved). */\n"
        . "                rd_kafka_mock_txn_end(mcluster, mtxn, pid, committed);\n";
    $block =~ s/^        //mg;
    my $fn = <<'C' . $block . <<'C2';
/* kafka-mirror test bed: transactions. EndTxn's commit/abort of an ongoing
 * transaction, moved here unchanged so that fencing aborts the same way.
 * @locks mcluster->lock MUST be held. */
static void rd_kafka_mock_txn_end(rd_kafka_mock_cluster_t *mcluster,
                                  rd_kafka_mock_txn_t *mtxn,
                                  rd_kafka_pid_t pid,
                                  rd_bool_t committed) {
        rd_kafka_mock_txn_partition_t *mtxnp;

C
}


C2
    replace_once($src, "/**\n * \@brief Generate a unique ProducerID\n */\n",
                 $fn . "/**\n * \@brief Generate a unique ProducerID\n */\n", "pid_new's comment");
    # EndTxn's own declaration of mtxnp is no longer used there.
    in_function($src, "static int rd_kafka_mock_handle_EndTxn(rd_kafka_mock_connection_t",
                "write_response:", sub {
        my ($body) = @_;
        replace_once($body, "                rd_kafka_mock_txn_partition_t *mtxnp;\n", "",
                     "EndTxn's mtxnp");
    });
}

sub patch_init_producer_id {
    my ($src) = @_;
    my $fn = <<'C';
/* kafka-mirror test bed: transactions. InitProducerId for a transactional.id,
 * as Kafka's TransactionCoordinator does it: the first call creates a producer
 * id; later calls keep it and bump its epoch, fencing the previous holder (its
 * requests now carry an older epoch); an exhausted epoch gets a new producer id
 * with epoch 0. An ongoing transaction is first aborted with a bumped epoch and
 * CONCURRENT_TRANSACTIONS returned, so the client retries (PrepareEpochFence).
 * @locks mcluster->lock MUST NOT be held. */
static rd_kafka_resp_err_t
rd_kafka_mock_txn_init_pid(rd_kafka_mock_cluster_t *mcluster,
                           const rd_kafkap_str_t *TransactionalId,
                           rd_kafka_pid_t *pidp) {
        rd_kafka_mock_pid_t *mpid = NULL, *each;
        rd_kafka_mock_txn_t *mtxn;
        int i;

        mtx_lock(&mcluster->lock);
        RD_LIST_FOREACH(each, &mcluster->pids, i) {
                if (!rd_kafkap_str_cmp_str(TransactionalId,
                                           each->TransactionalId)) {
                        mpid = each;
                        break;
                }
        }
        if (!mpid) {
                mtx_unlock(&mcluster->lock);
                *pidp = rd_kafka_mock_pid_new(mcluster, TransactionalId);
                return RD_KAFKA_RESP_ERR_NO_ERROR;
        }

        TAILQ_FOREACH(mtxn, &mcluster->transactions, link) {
                if (!rd_kafkap_str_cmp_str(TransactionalId,
                                           mtxn->transactional_id))
                        break;
        }
        if (mtxn && mtxn->state == RD_KAFKA_MOCK_TXN_ONGOING) {
                /* Exhausted epochs rotate below, so this stays in range. */
                mpid->pid.epoch++;
                rd_kafka_mock_txn_end(mcluster, mtxn, mpid->pid, rd_false);
                rd_kafka_dbg(mcluster->rk, MOCK, "MOCK",
                             "Fenced %s: aborted its open transaction",
                             rd_kafka_pid2str(mpid->pid));
                mtx_unlock(&mcluster->lock);
                return RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS;
        }

        if (mpid->pid.epoch >= INT16_MAX - 1) {
                /* Kafka: isProducerEpochExhausted -> a new producer id. */
                rd_kafka_mock_pid_t skel = {{-1, 0}};
                do {
                        skel.pid.id = rd_jitter(1, 900000) * 1000;
                } while (rd_list_find(&mcluster->pids, &skel,
                                      rd_kafka_mock_pid_cmp_pid));
                mpid->pid.id    = skel.pid.id;
                mpid->pid.epoch = 0;
        } else {
                mpid->pid.epoch++;
        }
        *pidp = mpid->pid;
        mtx_unlock(&mcluster->lock);

        rd_kafka_dbg(mcluster->rk, MOCK, "MOCK", "Bumped epoch: now %s",
                     rd_kafka_pid2str(*pidp));
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}


/**
 * @brief Handle InitProducerId
 */
C
    replace_once($src, "/**\n * \@brief Handle InitProducerId\n */\n", $fn, "InitProducerId's comment");
    in_function($src, "rd_kafka_mock_handle_InitProducerId(rd_kafka_mock_connection_t",
                "err_parse:", sub {
        my ($body) = @_;
        replace_once($body, <<'OLD', <<'NEW', "InitProducerId's pid choice");
                        err = rd_kafka_mock_pid_bump(mcluster, &TransactionalId,
                                                     &current_pid);
                        if (!err)
                                pid = current_pid;

                } else {
OLD
                        err = rd_kafka_mock_pid_bump(mcluster, &TransactionalId,
                                                     &current_pid);
                        if (!err)
                                pid = current_pid;
                        /* kafka-mirror test bed: transactions. A stale epoch
                         * is PRODUCER_FENCED from v4 on, as on Kafka. */
                        else if (err ==
                                     RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH &&
                                 rkbuf->rkbuf_reqhdr.ApiVersion >= 4)
                                err = RD_KAFKA_RESP_ERR_PRODUCER_FENCED;

                } else if (!RD_KAFKAP_STR_IS_NULL(&TransactionalId)) {
                        err = rd_kafka_mock_txn_init_pid(
                            mcluster, &TransactionalId, &pid);
                } else {
NEW
    });
}
