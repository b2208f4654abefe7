/*
 * txn-client: librdkafka's own transactional producer, as an independent client that checks
 * how the test broker fences a transactional.id (KIP-98). Built by
 * scripts/testbed/build-mock-kafka.sh against the same librdkafka.a as the mock broker (the
 * client side of librdkafka is not patched); driven by
 * test/integration/testbed/transactions-fencing.test.ts.
 *
 * Usage: txn-client BOOTSTRAP TOPIC PARTITION TRANSACTIONAL_ID LATE
 *   LATE is what the fenced producer P1 tries after P2 took its transactional.id, so that each
 *   request P1 can send with its old epoch is tried: "produce" (one more record to PARTITION:
 *   Produce), "add-partition" (one record to PARTITION+1: AddPartitionsToTxn first), "offsets"
 *   (send_offsets_to_transaction: AddOffsetsToTxn), "commit" (nothing: EndTxn at once).
 *
 * The scenario, one machine-readable stdout line per step ("STEP key=value ..."):
 *   P1 INIT err=E                        P1 init_transactions()
 *   P1 OPEN records=3 err=E              P1 begins and produces 3 records (keys p1-open-N), flushed
 *   P2 INIT err=E                        P2 init_transactions() with the same transactional.id
 *   P1 LATE action=LATE err=E            P1's late request (records keyed p1-late-N)
 *   P1 COMMIT err=E fatal=F fenced=F     P1 commit_transaction(); F is 0 or 1
 *   P1 FATAL err=E reason=TEXT           rd_kafka_fatal_error() of P1 and its reason
 *   P2 COMMIT records=2 err=E            P2 begins, produces p2-committed-N, commits
 *   P2 OPEN records=2 err=E              P2 begins, produces p2-open-N, flushes, leaves it open
 * then waits for one stdin line, "commit" or "abort", ends P2's open transaction with it:
 *   P2 END action=A err=E
 *   DONE
 * E is librdkafka's error name (NO_ERROR on success). Exit status 0 unless the arguments or a
 * client setup step are wrong: the test, not this program, decides what the answers must be.
 *
 * LATE "script" instead runs one producer driven by stdin, one command a line, so a test can lay
 * out any sequence of transactions (test/integration/kafka/read-transactional.test.ts):
 *   begin | produce PREFIX COUNT | commit | abort   ->  S BEGIN|PRODUCE|COMMIT|ABORT err=E
 * after "S INIT err=E" at start; stdin's end prints DONE and exits (an open transaction is left
 * to the broker, as a crashed producer leaves it). Records are keyed and valued PREFIX-N.
 */
/* librdkafka 2.15.1 from the test bed source tree, never the system 2.0.2 headers. */
#include "rdkafka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_MS 30000

static const char *bootstrap, *topic, *txn_id, *late;
static int32_t partition;

/* Delivery errors of the last flushed records, per producer (set from the poll thread). */
static rd_kafka_resp_err_t last_delivery_err;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque) {
        (void)rk;
        (void)opaque;
        if (msg->err)
                last_delivery_err = msg->err;
}

static void die(const char *what) {
        fprintf(stderr, "txn-client: %s\n", what);
        exit(2);
}

static rd_kafka_t *new_producer(const char *name) {
        char errstr[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "transactional.id", txn_id, errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "client.id", name, errstr, sizeof(errstr)) ||
            /* Fail fast: a fenced request must not be retried for minutes. */
            rd_kafka_conf_set(conf, "message.timeout.ms", "10000", errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "transaction.timeout.ms", "60000", errstr, sizeof(errstr)))
                die(errstr);
        rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk)
                die(errstr);
        return rk;
}

/* The name of an error object's code, and frees it. */
static const char *error_name(rd_kafka_error_t *error, int *fatal, int *fenced) {
        static char name[128];
        if (fatal)
                *fatal = error ? rd_kafka_error_is_fatal(error) : 0;
        if (fenced)
                *fenced = error ? rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR__FENCED : 0;
        snprintf(name, sizeof(name), "%s",
                 error ? rd_kafka_error_name(error) : rd_kafka_err2name(RD_KAFKA_RESP_ERR_NO_ERROR));
        if (error)
                rd_kafka_error_destroy(error);
        return name;
}

/* Produces COUNT records keyed PREFIX-N to partition PART and flushes; returns the first error (produce call,
 * delivery or flush). */
static rd_kafka_resp_err_t produce_to(rd_kafka_t *rk, int32_t part, const char *prefix, int count) {
        last_delivery_err = RD_KAFKA_RESP_ERR_NO_ERROR;
        for (int i = 0; i < count; i++) {
                char key[64];
                int len = snprintf(key, sizeof(key), "%s-%d", prefix, i);
                rd_kafka_resp_err_t err = rd_kafka_producev(
                    rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part),
                    RD_KAFKA_V_KEY(key, (size_t)len), RD_KAFKA_V_VALUE(key, (size_t)len),
                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
                if (err)
                        return err;
        }
        rd_kafka_resp_err_t err = rd_kafka_flush(rk, TIMEOUT_MS);
        return last_delivery_err ? last_delivery_err : err;
}

static rd_kafka_resp_err_t produce(rd_kafka_t *rk, const char *prefix, int count) {
        return produce_to(rk, partition, prefix, count);
}

/* P1's request after it was fenced; returns its error name. */
static const char *late_request(rd_kafka_t *p1) {
        if (!strcmp(late, "produce"))
                return rd_kafka_err2name(produce(p1, "p1-late", 1));
        if (!strcmp(late, "add-partition"))
                return rd_kafka_err2name(produce_to(p1, partition + 1, "p1-late", 1));
        if (!strcmp(late, "offsets")) {
                rd_kafka_topic_partition_list_t *offsets = rd_kafka_topic_partition_list_new(1);
                rd_kafka_topic_partition_list_add(offsets, topic, partition)->offset = 1;
                rd_kafka_consumer_group_metadata_t *group =
                    rd_kafka_consumer_group_metadata_new("txn-client-group");
                rd_kafka_error_t *error =
                    rd_kafka_send_offsets_to_transaction(p1, offsets, group, TIMEOUT_MS);
                rd_kafka_consumer_group_metadata_destroy(group);
                rd_kafka_topic_partition_list_destroy(offsets);
                return error_name(error, NULL, NULL);
        }
        return rd_kafka_err2name(RD_KAFKA_RESP_ERR_NO_ERROR); /* "commit": nothing before EndTxn */
}

/* LATE "script": one transactional producer, one stdin command a line (see the top). */
static int run_script(void) {
        rd_kafka_t *rk = new_producer("txn-client-script");
        printf("S INIT err=%s\n", error_name(rd_kafka_init_transactions(rk, TIMEOUT_MS), NULL, NULL));
        char line[256];
        while (fgets(line, sizeof(line), stdin)) {
                char prefix[128];
                int count;
                line[strcspn(line, "\r\n")] = '\0';
                if (!strcmp(line, "begin"))
                        printf("S BEGIN err=%s\n", error_name(rd_kafka_begin_transaction(rk), NULL, NULL));
                else if (sscanf(line, "produce %127s %d", prefix, &count) == 2 && count > 0)
                        printf("S PRODUCE records=%d err=%s\n", count,
                               rd_kafka_err2name(produce(rk, prefix, count)));
                else if (!strcmp(line, "commit"))
                        printf("S COMMIT err=%s\n",
                               error_name(rd_kafka_commit_transaction(rk, TIMEOUT_MS), NULL, NULL));
                else if (!strcmp(line, "abort"))
                        printf("S ABORT err=%s\n",
                               error_name(rd_kafka_abort_transaction(rk, TIMEOUT_MS), NULL, NULL));
                else
                        die("script: commands are begin, produce PREFIX COUNT (COUNT > 0), commit, abort");
        }
        /* No rd_kafka_destroy: an open transaction stays open, as a crashed producer leaves it. */
        printf("DONE\n");
        return 0;
}

static void report_fatal(rd_kafka_t *rk, const char *who) {
        char errstr[512];
        rd_kafka_resp_err_t err = rd_kafka_fatal_error(rk, errstr, sizeof(errstr));
        /* The reason last: librdkafka's text naming the request that was refused. */
        printf("%s FATAL err=%s reason=%s\n", who, rd_kafka_err2name(err), err ? errstr : "");
}

int main(int argc, char **argv) {
        if (argc != 6)
                die("usage: txn-client BOOTSTRAP TOPIC PARTITION TRANSACTIONAL_ID "
                    "produce|add-partition|offsets|commit|script");
        bootstrap = argv[1];
        topic     = argv[2];
        partition = (int32_t)atoi(argv[3]);
        txn_id    = argv[4];
        late      = argv[5];
        if (strcmp(late, "produce") && strcmp(late, "add-partition") && strcmp(late, "offsets") &&
            strcmp(late, "commit") && strcmp(late, "script"))
                die("LATE must be produce, add-partition, offsets, commit or script");
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (!strcmp(late, "script"))
                return run_script();

        rd_kafka_t *p1 = new_producer("txn-client-p1");
        printf("P1 INIT err=%s\n", error_name(rd_kafka_init_transactions(p1, TIMEOUT_MS), NULL, NULL));
        rd_kafka_error_t *begun = rd_kafka_begin_transaction(p1);
        if (begun)
                die(error_name(begun, NULL, NULL));
        printf("P1 OPEN records=3 err=%s\n", rd_kafka_err2name(produce(p1, "p1-open", 3)));

        rd_kafka_t *p2 = new_producer("txn-client-p2");
        printf("P2 INIT err=%s\n", error_name(rd_kafka_init_transactions(p2, TIMEOUT_MS), NULL, NULL));

        printf("P1 LATE action=%s err=%s\n", late, late_request(p1));
        int fatal = 0, fenced = 0;
        const char *committed = error_name(rd_kafka_commit_transaction(p1, TIMEOUT_MS), &fatal, &fenced);
        printf("P1 COMMIT err=%s fatal=%d fenced=%d\n", committed, fatal, fenced);
        report_fatal(p1, "P1");

        begun = rd_kafka_begin_transaction(p2);
        if (begun)
                die(error_name(begun, NULL, NULL));
        rd_kafka_resp_err_t produced = produce(p2, "p2-committed", 2);
        printf("P2 COMMIT records=2 err=%s\n",
               produced ? rd_kafka_err2name(produced)
                        : error_name(rd_kafka_commit_transaction(p2, TIMEOUT_MS), NULL, NULL));

        begun = rd_kafka_begin_transaction(p2);
        if (begun)
                die(error_name(begun, NULL, NULL));
        printf("P2 OPEN records=2 err=%s\n", rd_kafka_err2name(produce(p2, "p2-open", 2)));

        char line[64] = "";
        if (!fgets(line, sizeof(line), stdin))
                strcpy(line, "abort");
        int commit = strncmp(line, "commit", 6) == 0;
        rd_kafka_error_t *ended = commit ? rd_kafka_commit_transaction(p2, TIMEOUT_MS)
                                         : rd_kafka_abort_transaction(p2, TIMEOUT_MS);
        printf("P2 END action=%s err=%s\n", commit ? "commit" : "abort", error_name(ended, NULL, NULL));

        rd_kafka_destroy(p1);
        rd_kafka_destroy(p2);
        printf("DONE\n");
        return 0;
}
