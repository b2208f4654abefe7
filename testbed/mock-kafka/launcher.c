/*
 * mock-kafka: librdkafka 2.15.1's mock Kafka cluster as a process the tests drive over stdin.
 *
 * Usage: mock-kafka [--brokers N] [--no-auto-create-topics]
 *   --brokers N               brokers with ids 1..N (default 3)
 *   --no-auto-create-topics   behave like auto.create.topics.enable=false: Metadata never
 *                             creates a topic, whatever the client asks (default: the mock
 *                             creates an unknown topic on Metadata v4+ when the request's
 *                             AllowAutoTopicCreation is true, and always on Metadata v0-v3)
 * Environment (read by the patched library, see patch-retention.pl):
 *   MOCK_KAFKA_PARTITION_MAX_BYTES    log bytes kept per partition (default 4 GiB)
 *   MOCK_KAFKA_PARTITION_MAX_BATCHES  record batches kept per partition (default 1e12)
 *
 * Start-up prints exactly two lines on stdout:
 *   BOOTSTRAP host:port,host:port,...
 *   READY
 * Then each stdin line is one command, answered by exactly one stdout line: "OK" (possibly
 * followed by a value) or "ERR <message>". Words are separated by spaces; topic names cannot hold
 * spaces. Error codes are Kafka's numeric codes (librdkafka's negative internal codes work too,
 * e.g. -195 closes the connection). Broker ids are 1..N. Commands:
 *   ping                                            OK
 *   bootstraps                                      OK host:port,...
 *   create-topic TOPIC PARTITIONS [RF]              RF defaults to min(3, N)
 *   delete-topic TOPIC
 *   broker-down ID | broker-up ID
 *   broker-rtt ID MS                                latency added to every response
 *   set-leader TOPIC PARTITION ID                   ID -1: no leader
 *   set-follower TOPIC PARTITION ID                 preferred replica for follower fetching
 *   set-follower-wmarks TOPIC PARTITION LO HI       -1 means "follow the leader"
 *   push-errors API_KEY CODE [CODE...]              cluster-wide, consumed one per request
 *   push-broker-errors ID API_KEY CODE:RTT_MS [CODE:RTT_MS...]
 *   push-partition-errors TOPIC PARTITION API_KEY CODE [CODE...]
 *   clear-errors API_KEY                            drops the cluster-wide stack
 *   broker-error-count ID API_KEY                   OK <errors still queued on that broker>
 *   topic-error TOPIC CODE                          returned in Metadata until reset with 0
 *   delete-records TOPIC PARTITION BEFORE_OFFSET
 *   truncate-log TOPIC PARTITION OFFSET             unclean election: log ends at OFFSET (a
 *                                                   batch boundary), leader epoch + 1
 *   coordinator group|transaction KEY ID
 *   controller ID
 *   apiversion API_KEY MIN MAX                      -1 -1 disables the API
 *   advertise ID HOST PORT                          Metadata and FindCoordinator name HOST:PORT
 *                                                   for broker ID (e.g. a TLS terminator in
 *                                                   front of it); the listener stays where it is
 *   listener ID                                     OK host:port the broker really listens on
 *   quit                                            OK, then exit
 * The process also exits when stdin closes, so a crashed test never leaves brokers behind.
 *
 * Beware: the mock's partition commands (set-leader, set-follower, push-partition-errors,
 * topic-error, ...) auto-create an unknown topic instead of failing.
 *
 * ListGroups and DescribeGroups: group-admin.c (register_group_handlers), also for what the
 * mock's OffsetFetch lacks (a null topic list) and the member facts DescribeGroups names.
 *
 * CreateTopics: the mock has no handler for it, so we register one (v0-v4, non-flexible, what
 * kafkajs 2.2.4 uses) in the cluster's handler table. This needs librdkafka's internal headers,
 * which is why the build pins librdkafka 2.15.1 exactly.
 */
#include "rdkafka_int.h"
#include "rdkafka_buf.h"
#include "rdkafka_mock.h"
#include "rdkafka_mock_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 256

#include "group-admin.c"

static int (*original_metadata_handler)(rd_kafka_mock_connection_t *, rd_kafka_buf_t *);

/* Kafka error codes the CreateTopics handler answers with. */
#define ERR_TOPIC_ALREADY_EXISTS 36
#define ERR_INVALID_PARTITIONS 37
#define ERR_INVALID_REPLICATION_FACTOR 38
#define ERR_INVALID_REQUEST 42

/**
 * CreateTopics v0-v4 (KIP-4). Runs on the mock cluster's own thread, so it creates the topic
 * with the internal auto-create call: rd_kafka_mock_topic_create() would post an operation back
 * to this same thread and wait for it forever.
 */
static int handle_create_topics(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        const rd_bool_t log_decode_errors = rd_true;
        rd_kafka_mock_cluster_t *mcluster = mconn->broker->cluster;
        const int16_t version             = rkbuf->rkbuf_reqhdr.ApiVersion;
        rd_kafka_buf_t *resp              = rd_kafka_mock_buf_new_response(rkbuf);
        rd_kafka_resp_err_t injected;
        int32_t topic_cnt, timeout_ms, i;
        rd_bool_t validate_only = rd_false;
        struct {
                char *name;
                int32_t partitions;
                int16_t replication_factor;
                int32_t assignment_cnt;
                int16_t assignment_rf;
        } *topics = NULL;

        rd_kafka_buf_read_arraycnt(rkbuf, &topic_cnt, RD_KAFKAP_TOPICS_MAX);
        if (topic_cnt < 0)
                topic_cnt = 0;
        topics = rd_calloc(topic_cnt > 0 ? topic_cnt : 1, sizeof(*topics));

        for (i = 0; i < topic_cnt; i++) {
                rd_kafkap_str_t name;
                int32_t assign_cnt, config_cnt, j;

                rd_kafka_buf_read_str(rkbuf, &name);
                topics[i].name = RD_KAFKAP_STR_IS_NULL(&name) ? NULL : RD_KAFKAP_STR_DUP(&name);
                rd_kafka_buf_read_i32(rkbuf, &topics[i].partitions);
                rd_kafka_buf_read_i16(rkbuf, &topics[i].replication_factor);

                rd_kafka_buf_read_arraycnt(rkbuf, &assign_cnt, RD_KAFKAP_PARTITIONS_MAX);
                topics[i].assignment_cnt = assign_cnt < 0 ? 0 : assign_cnt;
                for (j = 0; j < assign_cnt; j++) {
                        int32_t partition, replica_cnt, k;
                        rd_kafka_buf_read_i32(rkbuf, &partition);
                        rd_kafka_buf_read_arraycnt(rkbuf, &replica_cnt, 1000);
                        if (j == 0)
                                topics[i].assignment_rf = (int16_t)replica_cnt;
                        for (k = 0; k < replica_cnt; k++) {
                                int32_t replica;
                                rd_kafka_buf_read_i32(rkbuf, &replica);
                        }
                }

                /* The mock has no topic configs: entries are read and ignored. */
                rd_kafka_buf_read_arraycnt(rkbuf, &config_cnt, 10000);
                for (j = 0; j < config_cnt; j++) {
                        rd_kafkap_str_t config_name, config_value;
                        rd_kafka_buf_read_str(rkbuf, &config_name);
                        rd_kafka_buf_read_str(rkbuf, &config_value);
                }
        }
        rd_kafka_buf_read_i32(rkbuf, &timeout_ms);
        if (version >= 1)
                rd_kafka_buf_read_bool(rkbuf, &validate_only);

        /* Errors pushed for ApiKey 19 (push-errors 19 ...) apply to every topic of the request. */
        injected = rd_kafka_mock_next_request_error(mconn, resp);

        if (version >= 2)
                rd_kafka_buf_write_i32(resp, 0); /* ThrottleTimeMs */
        rd_kafka_buf_write_arraycnt(resp, topic_cnt);

        for (i = 0; i < topic_cnt; i++) {
                int16_t err         = (int16_t)injected;
                const char *message = injected ? rd_kafka_err2str(injected) : NULL;
                int partitions      = topics[i].partitions;
                int rf              = topics[i].replication_factor;

                if (topics[i].assignment_cnt > 0) {
                        if (partitions != -1 || rf != -1) {
                                err     = ERR_INVALID_REQUEST;
                                message = "replica assignment excludes numPartitions and replicationFactor";
                        }
                        partitions = topics[i].assignment_cnt;
                        rf         = topics[i].assignment_rf;
                }
                if (partitions == -1)
                        partitions = mcluster->defaults.partition_cnt;
                if (rf == -1)
                        rf = RD_MIN(mcluster->defaults.replication_factor, mcluster->broker_cnt);

                if (err) {
                        /* already decided */
                } else if (!topics[i].name || !*topics[i].name) {
                        err     = ERR_INVALID_REQUEST;
                        message = "empty topic name";
                } else if (rd_kafka_mock_topic_find(mcluster, topics[i].name)) {
                        err     = ERR_TOPIC_ALREADY_EXISTS;
                        message = "Topic already exists.";
                } else if (partitions < 1) {
                        err     = ERR_INVALID_PARTITIONS;
                        message = "Number of partitions must be larger than 0.";
                } else if (rf < 1 || rf > mcluster->broker_cnt) {
                        /* Like Kafka: more replicas than brokers is refused, not capped. */
                        err     = ERR_INVALID_REPLICATION_FACTOR;
                        message = "Replication factor must be between 1 and the broker count.";
                } else if (!validate_only) {
                        rd_kafka_resp_err_t create_err;
                        int saved_rf = mcluster->defaults.replication_factor;
                        mcluster->defaults.replication_factor = rf;
                        rd_kafka_mock_topic_auto_create(mcluster, topics[i].name, partitions,
                                                        &create_err);
                        mcluster->defaults.replication_factor = saved_rf;
                        err = (int16_t)create_err;
                }

                rd_kafka_buf_write_str(resp, topics[i].name, -1);
                rd_kafka_buf_write_i16(resp, err);
                if (version >= 1)
                        rd_kafka_buf_write_str(resp, message, -1);
        }

        for (i = 0; i < topic_cnt; i++)
                rd_free(topics[i].name);
        rd_free(topics);
        rd_kafka_mock_connection_send_response(mconn, resp);
        return 0;

err_parse:
        if (topics) {
                for (i = 0; i < topic_cnt; i++)
                        if (topics[i].name)
                                rd_free(topics[i].name);
                rd_free(topics);
        }
        rd_kafka_buf_destroy(resp);
        return -1;
}

/**
 * Clears AllowAutoTopicCreation (Metadata v4+) in the request bytes, then runs the mock's own
 * handler, so a broker with auto.create.topics.enable=false can be imitated without copying the
 * handler. Metadata v0-v3 has no such flag and always auto-creates in the mock.
 */
static int handle_metadata_no_auto_create(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        const rd_bool_t log_decode_errors = rd_true;
        const int16_t version             = rkbuf->rkbuf_reqhdr.ApiVersion;
        const size_t start                = rd_slice_offset(&rkbuf->rkbuf_reader);
        int32_t topic_cnt, i;

        if (version >= 4) {
                rd_kafka_buf_read_arraycnt(rkbuf, &topic_cnt, RD_KAFKAP_TOPICS_MAX);
                for (i = 0; i < topic_cnt; i++) {
                        rd_kafkap_str_t topic;
                        if (version >= 10) {
                                rd_kafka_Uuid_t topic_id;
                                rd_kafka_buf_read_uuid(rkbuf, &topic_id);
                        }
                        rd_kafka_buf_read_str(rkbuf, &topic);
                        rd_kafka_buf_skip_tags(rkbuf);
                }
                if (rd_slice_remains(&rkbuf->rkbuf_reader) < 1)
                        goto err_parse;
                {
                        const char no = 0;
                        rd_buf_write_update(&rkbuf->rkbuf_buf,
                                            rd_slice_abs_offset(&rkbuf->rkbuf_reader), &no, 1);
                }
                rd_slice_seek(&rkbuf->rkbuf_reader, start);
        }
        return original_metadata_handler(mconn, rkbuf);

err_parse:
        return -1;
}

static void reply_err(rd_kafka_resp_err_t err) {
        printf("ERR %s: %s\n", rd_kafka_err2name(err), rd_kafka_err2str(err));
}

static void reply_result(rd_kafka_resp_err_t err) {
        if (err)
                reply_err(err);
        else
                printf("OK\n");
}

/** Parses a whole decimal integer within [min, max]; returns 0 on success. */
static int parse_int(const char *s, long long min, long long max, long long *out) {
        char *end;
        long long v;
        if (!s || !*s)
                return -1;
        errno = 0;
        v     = strtoll(s, &end, 10);
        if (errno || *end || v < min || v > max)
                return -1;
        *out = v;
        return 0;
}

#define NEED_ARGS(n, usage)                                                    \
        do {                                                                   \
                if (argc != (n)) {                                             \
                        printf("ERR usage: %s\n", usage);                      \
                        return 0;                                              \
                }                                                              \
        } while (0)

#define INT_ARG(var, idx, min, max)                                            \
        long long var;                                                         \
        if (parse_int(argv[idx], (min), (max), &var)) {                        \
                printf("ERR invalid %s: %s\n", #var, argv[idx]);               \
                return 0;                                                      \
        }

/** Runs one command; returns 1 when the launcher should exit. */
/*
 * truncate-log: what an unclean leader election does to a partition. The new leader's log ends
 * at OFFSET (a batch boundary: the batches from there on are dropped) and the leader epoch is
 * bumped, so later appends carry the new epoch. The mock has no such command and its log is
 * owned by the mock cluster's thread, so the work runs there, in a one-shot timer callback (the
 * cluster's timers run on its thread), and this thread waits for it.
 */
struct truncate_job {
        rd_kafka_mock_cluster_t *mcluster;
        const char *topic;
        int32_t partition;
        int64_t offset;
        rd_kafka_resp_err_t err;
        int done;
        mtx_t lock;
        cnd_t cond;
        rd_kafka_timer_t timer;
};

static rd_kafka_resp_err_t truncate_log_now(struct truncate_job *job) {
        rd_kafka_mock_topic_t *mtopic = rd_kafka_mock_topic_find(job->mcluster, job->topic);
        rd_kafka_mock_partition_t *mpart = mtopic ? rd_kafka_mock_partition_find(mtopic, job->partition) : NULL;
        rd_kafka_mock_msgset_t *mset;
        if (!mpart)
                return RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
        if (job->offset < mpart->start_offset || job->offset > mpart->end_offset)
                return RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE;
        /* A batch across OFFSET cannot be cut: refuse rather than keep part of it. */
        TAILQ_FOREACH(mset, &mpart->msgsets, link) {
                if (mset->first_offset < job->offset && mset->last_offset >= job->offset)
                        return RD_KAFKA_RESP_ERR_INVALID_REQUEST;
        }
        while ((mset = TAILQ_LAST(&mpart->msgsets, rd_kafka_mock_msgset_tailq_s)) &&
               mset->first_offset >= job->offset) {
                /* As the library's static rd_kafka_mock_msgset_destroy does. */
                mpart->cnt--;
                mpart->size -= RD_KAFKAP_BYTES_LEN(&mset->bytes);
                TAILQ_REMOVE(&mpart->msgsets, mset, link);
                rd_free(mset);
        }
        mpart->end_offset = job->offset;
        if (mpart->update_follower_end_offset)
                mpart->follower_end_offset = mpart->end_offset;
        if (mpart->lso > mpart->end_offset)
                mpart->lso = mpart->end_offset;
        mpart->leader_epoch++;
        return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static void truncate_log_cb(rd_kafka_timers_t *rkts, void *arg) {
        struct truncate_job *job = arg;
        (void)rkts;
        mtx_lock(&job->lock);
        job->err = truncate_log_now(job);
        job->done = 1;
        cnd_signal(&job->cond);
        mtx_unlock(&job->lock);
}

static rd_kafka_resp_err_t truncate_log(rd_kafka_mock_cluster_t *mcluster, const char *topic,
                                        int32_t partition, int64_t offset) {
        struct truncate_job job = {mcluster, topic, partition, offset, RD_KAFKA_RESP_ERR_NO_ERROR, 0};
        mtx_init(&job.lock, mtx_plain);
        cnd_init(&job.cond);
        mtx_lock(&job.lock);
        rd_kafka_timer_start_oneshot(&mcluster->timers, &job.timer, rd_false, 1, truncate_log_cb, &job);
        while (!job.done)
                cnd_wait(&job.cond, &job.lock);
        mtx_unlock(&job.lock);
        mtx_destroy(&job.lock);
        cnd_destroy(&job.cond);
        return job.err;
}

/* The broker list does not change after start-up (no broker add/decommission commands). */
static rd_kafka_mock_broker_t *find_broker(rd_kafka_mock_cluster_t *mcluster, int32_t id) {
        rd_kafka_mock_broker_t *mrkb;
        TAILQ_FOREACH(mrkb, &mcluster->brokers, link) {
                if (mrkb->id == id)
                        return mrkb;
        }
        return NULL;
}

/* After `advertise`, the broker's own port field holds the advertised one; the bound socket
 * still knows where the broker listens. */
static void print_listener(rd_kafka_mock_broker_t *mrkb) {
        struct sockaddr_in sin;
        socklen_t len = sizeof(sin);
        if (!mrkb) {
                reply_err(RD_KAFKA_RESP_ERR__UNKNOWN_BROKER);
        } else if (getsockname(mrkb->listen_s, (struct sockaddr *)&sin, &len) == -1) {
                printf("ERR getsockname: %s\n", strerror(errno));
        } else {
                char host[64];
                inet_ntop(AF_INET, &sin.sin_addr, host, sizeof(host));
                printf("OK %s:%d\n", host, ntohs(sin.sin_port));
        }
}

static int run_command(rd_kafka_mock_cluster_t *mcluster, int argc, char **argv) {
        const char *cmd = argv[0];

        if (!strcmp(cmd, "ping")) {
                printf("OK\n");
        } else if (!strcmp(cmd, "quit")) {
                printf("OK\n");
                return 1;
        } else if (!strcmp(cmd, "bootstraps")) {
                printf("OK %s\n", rd_kafka_mock_cluster_bootstraps(mcluster));
        } else if (!strcmp(cmd, "create-topic")) {
                long long rf = -1;
                if (argc != 3 && argc != 4) {
                        printf("ERR usage: create-topic TOPIC PARTITIONS [RF]\n");
                        return 0;
                }
                INT_ARG(partitions, 2, 1, 100000);
                if (argc == 4 && parse_int(argv[3], 1, 1000, &rf)) {
                        printf("ERR invalid replication factor: %s\n", argv[3]);
                        return 0;
                }
                if (rf == -1)
                        rf = RD_MIN(3, mcluster->broker_cnt);
                reply_result(rd_kafka_mock_topic_create(mcluster, argv[1], (int)partitions, (int)rf));
        } else if (!strcmp(cmd, "delete-topic")) {
                NEED_ARGS(2, "delete-topic TOPIC");
                reply_result(rd_kafka_mock_topic_delete(mcluster, argv[1]));
        } else if (!strcmp(cmd, "broker-down") || !strcmp(cmd, "broker-up")) {
                NEED_ARGS(2, "broker-down|broker-up ID");
                INT_ARG(broker, 1, 0, INT32_MAX);
                reply_result(!strcmp(cmd, "broker-down")
                                 ? rd_kafka_mock_broker_set_down(mcluster, (int32_t)broker)
                                 : rd_kafka_mock_broker_set_up(mcluster, (int32_t)broker));
        } else if (!strcmp(cmd, "broker-rtt")) {
                NEED_ARGS(3, "broker-rtt ID MS");
                INT_ARG(broker, 1, 0, INT32_MAX);
                INT_ARG(rtt_ms, 2, 0, INT32_MAX);
                reply_result(rd_kafka_mock_broker_set_rtt(mcluster, (int32_t)broker, (int)rtt_ms));
        } else if (!strcmp(cmd, "set-leader") || !strcmp(cmd, "set-follower")) {
                NEED_ARGS(4, "set-leader|set-follower TOPIC PARTITION ID");
                INT_ARG(partition, 2, 0, INT32_MAX);
                INT_ARG(broker, 3, -1, INT32_MAX);
                reply_result(!strcmp(cmd, "set-leader")
                                 ? rd_kafka_mock_partition_set_leader(mcluster, argv[1], (int32_t)partition,
                                                                      (int32_t)broker)
                                 : rd_kafka_mock_partition_set_follower(mcluster, argv[1],
                                                                        (int32_t)partition, (int32_t)broker));
        } else if (!strcmp(cmd, "set-follower-wmarks")) {
                NEED_ARGS(5, "set-follower-wmarks TOPIC PARTITION LO HI");
                INT_ARG(partition, 2, 0, INT32_MAX);
                INT_ARG(lo, 3, -1, INT64_MAX);
                INT_ARG(hi, 4, -1, INT64_MAX);
                reply_result(rd_kafka_mock_partition_set_follower_wmarks(mcluster, argv[1],
                                                                         (int32_t)partition, lo, hi));
        } else if (!strcmp(cmd, "push-errors")) {
                rd_kafka_resp_err_t errs[MAX_ARGS];
                int i;
                if (argc < 3) {
                        printf("ERR usage: push-errors API_KEY CODE [CODE...]\n");
                        return 0;
                }
                INT_ARG(api_key, 1, 0, RD_KAFKAP__NUM - 1);
                for (i = 2; i < argc; i++) {
                        INT_ARG(code, i, -200, 32767);
                        errs[i - 2] = (rd_kafka_resp_err_t)code;
                }
                rd_kafka_mock_push_request_errors_array(mcluster, (int16_t)api_key, (size_t)(argc - 2), errs);
                printf("OK\n");
        } else if (!strcmp(cmd, "push-broker-errors")) {
                int i;
                if (argc < 4) {
                        printf("ERR usage: push-broker-errors ID API_KEY CODE:RTT_MS [CODE:RTT_MS...]\n");
                        return 0;
                }
                INT_ARG(broker, 1, 0, INT32_MAX);
                INT_ARG(api_key, 2, 0, RD_KAFKAP__NUM - 1);
                /* Validate everything first so a bad pair leaves the stack untouched. */
                for (i = 3; i < argc; i++) {
                        char pair[64];
                        char *colon;
                        long long code, rtt;
                        snprintf(pair, sizeof(pair), "%s", argv[i]);
                        colon = strchr(pair, ':');
                        if (!colon) {
                                printf("ERR expected CODE:RTT_MS, got %s\n", argv[i]);
                                return 0;
                        }
                        *colon = '\0';
                        if (parse_int(pair, -200, 32767, &code) || parse_int(colon + 1, 0, INT32_MAX, &rtt)) {
                                printf("ERR expected CODE:RTT_MS, got %s\n", argv[i]);
                                return 0;
                        }
                }
                for (i = 3; i < argc; i++) {
                        long long code, rtt;
                        char pair[64];
                        char *colon;
                        rd_kafka_resp_err_t err;
                        snprintf(pair, sizeof(pair), "%s", argv[i]);
                        colon  = strchr(pair, ':');
                        *colon = '\0';
                        parse_int(pair, -200, 32767, &code);
                        parse_int(colon + 1, 0, INT32_MAX, &rtt);
                        err = rd_kafka_mock_broker_push_request_error_rtts(
                            mcluster, (int32_t)broker, (int16_t)api_key, 1, (rd_kafka_resp_err_t)code, (int)rtt);
                        if (err) {
                                reply_err(err);
                                return 0;
                        }
                }
                printf("OK\n");
        } else if (!strcmp(cmd, "push-partition-errors")) {
                int i;
                if (argc < 5) {
                        printf("ERR usage: push-partition-errors TOPIC PARTITION API_KEY CODE [CODE...]\n");
                        return 0;
                }
                INT_ARG(partition, 2, 0, INT32_MAX);
                INT_ARG(api_key, 3, 0, RD_KAFKAP__NUM - 1);
                for (i = 4; i < argc; i++) {
                        INT_ARG(code, i, -200, 32767);
                        (void)code;
                }
                for (i = 4; i < argc; i++) {
                        long long code;
                        rd_kafka_resp_err_t err;
                        parse_int(argv[i], -200, 32767, &code);
                        err = rd_kafka_mock_partition_push_request_errors(
                            mcluster, argv[1], (int32_t)partition, (int16_t)api_key, 1,
                            (rd_kafka_resp_err_t)code);
                        if (err) {
                                reply_err(err);
                                return 0;
                        }
                }
                printf("OK\n");
        } else if (!strcmp(cmd, "clear-errors")) {
                NEED_ARGS(2, "clear-errors API_KEY");
                INT_ARG(api_key, 1, 0, RD_KAFKAP__NUM - 1);
                rd_kafka_mock_clear_request_errors(mcluster, (int16_t)api_key);
                printf("OK\n");
        } else if (!strcmp(cmd, "broker-error-count")) {
                size_t cnt = 0;
                rd_kafka_resp_err_t err;
                NEED_ARGS(3, "broker-error-count ID API_KEY");
                INT_ARG(broker, 1, 0, INT32_MAX);
                INT_ARG(api_key, 2, 0, RD_KAFKAP__NUM - 1);
                err = rd_kafka_mock_broker_error_stack_cnt(mcluster, (int32_t)broker, (int16_t)api_key, &cnt);
                if (err)
                        reply_err(err);
                else
                        printf("OK %zu\n", cnt);
        } else if (!strcmp(cmd, "topic-error")) {
                NEED_ARGS(3, "topic-error TOPIC CODE");
                INT_ARG(code, 2, -200, 32767);
                rd_kafka_mock_topic_set_error(mcluster, argv[1], (rd_kafka_resp_err_t)code);
                printf("OK\n");
        } else if (!strcmp(cmd, "delete-records")) {
                NEED_ARGS(4, "delete-records TOPIC PARTITION BEFORE_OFFSET");
                INT_ARG(partition, 2, 0, INT32_MAX);
                INT_ARG(before_offset, 3, -1, INT64_MAX);
                reply_result(rd_kafka_mock_partition_delete_records(mcluster, argv[1], (int32_t)partition,
                                                                    before_offset));
        } else if (!strcmp(cmd, "truncate-log")) {
                NEED_ARGS(4, "truncate-log TOPIC PARTITION OFFSET");
                INT_ARG(partition, 2, 0, INT32_MAX);
                INT_ARG(offset, 3, 0, INT64_MAX);
                reply_result(truncate_log(mcluster, argv[1], (int32_t)partition, offset));
        } else if (!strcmp(cmd, "coordinator")) {
                NEED_ARGS(4, "coordinator group|transaction KEY ID");
                INT_ARG(broker, 3, -1, INT32_MAX);
                if (strcmp(argv[1], "group") && strcmp(argv[1], "transaction")) {
                        printf("ERR coordinator type must be group or transaction\n");
                        return 0;
                }
                reply_result(rd_kafka_mock_coordinator_set(mcluster, argv[1], argv[2], (int32_t)broker));
        } else if (!strcmp(cmd, "controller")) {
                NEED_ARGS(2, "controller ID");
                INT_ARG(broker, 1, -1, INT32_MAX);
                rd_kafka_mock_set_controller_id(mcluster, (int32_t)broker);
                printf("OK\n");
        } else if (!strcmp(cmd, "advertise")) {
                NEED_ARGS(4, "advertise ID HOST PORT");
                INT_ARG(broker, 1, 0, INT32_MAX);
                INT_ARG(port, 3, 1, 65535);
                if (!find_broker(mcluster, (int32_t)broker)) {
                        reply_err(RD_KAFKA_RESP_ERR__UNKNOWN_BROKER);
                        return 0;
                }
                rd_kafka_mock_broker_set_host_port(mcluster, (int32_t)broker, argv[2], (int)port);
                printf("OK\n");
        } else if (!strcmp(cmd, "listener")) {
                NEED_ARGS(2, "listener ID");
                INT_ARG(broker, 1, 0, INT32_MAX);
                print_listener(find_broker(mcluster, (int32_t)broker));
        } else if (!strcmp(cmd, "apiversion")) {
                NEED_ARGS(4, "apiversion API_KEY MIN MAX");
                INT_ARG(api_key, 1, 0, RD_KAFKAP__NUM - 1);
                INT_ARG(min_version, 2, -1, INT16_MAX);
                INT_ARG(max_version, 3, -1, INT16_MAX);
                reply_result(rd_kafka_mock_set_apiversion(mcluster, (int16_t)api_key, (int16_t)min_version,
                                                          (int16_t)max_version));
        } else {
                printf("ERR unknown command: %s\n", cmd);
        }
        return 0;
}

static void usage_exit(const char *argv0) {
        fprintf(stderr, "usage: %s [--brokers N] [--no-auto-create-topics]\n", argv0);
        exit(2);
}

int main(int argc, char **argv) {
        int broker_cnt        = 3;
        int auto_create       = 1;
        char errstr[512]      = "";
        char *line            = NULL;
        size_t line_cap       = 0;
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t *rk;
        rd_kafka_mock_cluster_t *mcluster;
        int i;

        for (i = 1; i < argc; i++) {
                long long n;
                if (!strcmp(argv[i], "--brokers") && i + 1 < argc) {
                        if (parse_int(argv[++i], 1, 64, &n))
                                usage_exit(argv[0]);
                        broker_cnt = (int)n;
                } else if (!strcmp(argv[i], "--no-auto-create-topics")) {
                        auto_create = 0;
                } else {
                        usage_exit(argv[0]);
                }
        }

        /* The mock cluster needs an rd_kafka_t for its logging and threads; this one never
         * connects anywhere. */
        /* Notices such as "no bootstrap.servers" concern this unused client, not the cluster. */
        rd_kafka_conf_set(conf, "log_level", "4", errstr, sizeof(errstr));
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "mock-kafka: rd_kafka_new failed: %s\n", errstr);
                return 1;
        }
        mcluster = rd_kafka_mock_cluster_new(rk, broker_cnt);
        if (!mcluster) {
                fprintf(stderr, "mock-kafka: rd_kafka_mock_cluster_new failed\n");
                return 1;
        }

        /* kafkajs sends InitProducerId and CreateTopics to the controller; the mock's default
         * controller id does not name a real broker. */
        rd_kafka_mock_set_controller_id(mcluster, 1);
        rd_kafka_mock_group_initial_rebalance_delay_ms(mcluster, 0);

        /* No client knows the bootstrap addresses yet, so nothing else reads the table. */
        mcluster->api_handlers[RD_KAFKAP_CreateTopics] =
            (struct rd_kafka_mock_api_handler) {0, 4, -1, handle_create_topics};
        register_group_handlers(mcluster);
        if (!auto_create) {
                original_metadata_handler = mcluster->api_handlers[RD_KAFKAP_Metadata].cb;
                mcluster->api_handlers[RD_KAFKAP_Metadata].cb = handle_metadata_no_auto_create;
        }

        printf("BOOTSTRAP %s\nREADY\n", rd_kafka_mock_cluster_bootstraps(mcluster));
        fflush(stdout);

        while (getline(&line, &line_cap, stdin) != -1) {
                char *args[MAX_ARGS];
                int nargs = 0;
                char *save = NULL;
                char *tok;

                for (tok = strtok_r(line, " \t\r\n", &save); tok && nargs < MAX_ARGS;
                     tok = strtok_r(NULL, " \t\r\n", &save))
                        args[nargs++] = tok;
                if (nargs == 0) {
                        printf("ERR empty command\n");
                } else if (tok) {
                        printf("ERR too many arguments\n");
                } else if (run_command(mcluster, nargs, args)) {
                        fflush(stdout);
                        break;
                }
                fflush(stdout);
        }

        free(line);
        rd_kafka_mock_cluster_destroy(mcluster);
        rd_kafka_destroy(rk);
        return 0;
}
