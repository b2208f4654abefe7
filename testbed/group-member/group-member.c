/*
 * group-member: one consumer-group member on librdkafka 2.15.1's high-level consumer, for either
 * rebalance protocol: "consumer" (KIP-848: ConsumerGroupHeartbeat, the default for new consumers
 * from Kafka 4.0) or "classic" (JoinGroup/SyncGroup). Debian's kcat is librdkafka 2.0.2, too old
 * for KIP-848, hence this program. Built by scripts/testbed/build-mock-kafka.sh against the same
 * librdkafka.a as the mock broker (the client side of librdkafka is not patched); driven by
 * test/helpers/group-member.ts.
 *
 * Usage: group-member BOOTSTRAP GROUP consumer|classic TOPIC...
 *   Subscribes to the TOPICs, reads from the group's committed offsets (earliest where none),
 *   auto-commits every 200 ms. On SIGTERM or SIGINT it closes the consumer: commits what it
 *   read and leaves the group (a KIP-848 leave heartbeat, or LeaveGroup), then exits 0.
 * One stdout line per fact, unbuffered:
 *   ASSIGNED count=N                   after each rebalance callback: partitions now assigned
 *   RECORD topic=T partition=P offset=O value=V   each record (V as bytes; tests write ASCII)
 *   ERROR err=E                        a consumer error other than a partition's end
 *   LEFT err=E                         the consumer closed (E: NO_ERROR when it left cleanly)
 * E is librdkafka's error name. Exit status 0 after LEFT, 1 when the consumer cannot start, 2 on
 * wrong arguments.
 */
/* librdkafka 2.15.1 from the test bed source tree, never the system 2.0.2 headers. */
#include "rdkafka.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stopping = 0;

static void on_signal(int sig) {
        (void)sig;
        stopping = 1;
}

static void die(int status, const char *what, const char *detail) {
        fprintf(stderr, "group-member: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        exit(status);
}

/* The KIP-848 protocol hands out partitions incrementally, the classic one (eager) all at once. */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t *parts,
                         void *opaque) {
        rd_kafka_topic_partition_list_t *now = NULL;
        int cooperative = !strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE");
        (void)opaque;
        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
                if (cooperative)
                        rd_kafka_error_destroy(rd_kafka_incremental_assign(rk, parts));
                else
                        rd_kafka_assign(rk, parts);
        } else if (cooperative) {
                rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
        } else {
                rd_kafka_assign(rk, NULL);
        }
        rd_kafka_assignment(rk, &now);
        printf("ASSIGNED count=%d\n", now ? now->cnt : 0);
        if (now)
                rd_kafka_topic_partition_list_destroy(now);
}

static void set(rd_kafka_conf_t *conf, const char *name, const char *value) {
        char errstr[512];
        if (rd_kafka_conf_set(conf, name, value, errstr, sizeof(errstr)))
                die(2, "bad configuration", errstr);
}

static void print_message(const rd_kafka_message_t *m) {
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
                return;
        if (m->err) {
                printf("ERROR err=%s\n", rd_kafka_err2name(m->err));
                return;
        }
        printf("RECORD topic=%s partition=%d offset=%lld value=%.*s\n", rd_kafka_topic_name(m->rkt),
               m->partition, (long long)m->offset, (int)m->len, m->payload ? (const char *)m->payload : "");
}

int main(int argc, char **argv) {
        char errstr[512];
        rd_kafka_conf_t *conf;
        rd_kafka_t *rk;
        rd_kafka_topic_partition_list_t *topics;
        rd_kafka_resp_err_t err;
        int i;

        if (argc < 5 || (strcmp(argv[3], "consumer") && strcmp(argv[3], "classic")))
                die(2, "usage: group-member BOOTSTRAP GROUP consumer|classic TOPIC...", NULL);
        setvbuf(stdout, NULL, _IONBF, 0);
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);

        conf = rd_kafka_conf_new();
        set(conf, "bootstrap.servers", argv[1]);
        set(conf, "group.id", argv[2]);
        set(conf, "group.protocol", argv[3]);
        set(conf, "client.id", "group-member");
        set(conf, "auto.offset.reset", "earliest");
        set(conf, "auto.commit.interval.ms", "200");
        rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
        rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
        if (!rk)
                die(1, "rd_kafka_new failed", errstr);
        rd_kafka_poll_set_consumer(rk);

        topics = rd_kafka_topic_partition_list_new(argc - 4);
        for (i = 4; i < argc; i++)
                rd_kafka_topic_partition_list_add(topics, argv[i], RD_KAFKA_PARTITION_UA);
        err = rd_kafka_subscribe(rk, topics);
        rd_kafka_topic_partition_list_destroy(topics);
        if (err)
                die(1, "subscribe failed", rd_kafka_err2name(err));

        while (!stopping) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
                if (m) {
                        print_message(m);
                        rd_kafka_message_destroy(m);
                }
        }
        err = rd_kafka_consumer_close(rk);
        printf("LEFT err=%s\n", rd_kafka_err2name(err));
        rd_kafka_destroy(rk);
        return 0;
}
