/*
 * admin-client: librdkafka's own Admin API as an independent client of the test broker's topic
 * admin handlers (testbed/mock-kafka/topic-admin.c); kcat has no Admin API. Built by
 * scripts/testbed/build-mock-kafka.sh against the same librdkafka.a as the mock broker (the
 * client side of librdkafka is not patched); driven by test/integration/testbed/topic-admin.test.ts.
 *
 * Usage: admin-client BOOTSTRAP [--validate-only] COMMAND ARGS...
 *   describe TOPIC [NAME...]            DescribeConfigs (NAMEs: only those configs)
 *   describe-broker ID                  DescribeConfigs of a BROKER resource
 *   alter TOPIC OP:NAME[=VALUE]...      IncrementalAlterConfigs, OP set|delete|append|subtract
 *   replace TOPIC NAME=VALUE...         AlterConfigs (replaces the topic's whole config set)
 *   create-topic TOPIC PARTITIONS RF [NAME=VALUE...]   CreateTopics with configs
 *   create-partitions TOPIC COUNT       CreatePartitions
 * Output, one line each:
 *   CONFIG name=N source=S default=0|1 value=V    (describe; value= takes the rest of the line)
 *   RESULT err=E message=TEXT                     (every command, last line)
 * E is librdkafka's error name (NO_ERROR on success). Exit status 0 unless the arguments or the
 * client setup are wrong: the test, not this program, decides what the answers must be.
 */
/* librdkafka 2.15.1 from the test bed source tree, never the system 2.0.2 headers. */
#include "rdkafka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_MS 30000

static void die(const char *what) {
        fprintf(stderr, "admin-client: %s\n", what);
        exit(2);
}

static void print_result(rd_kafka_resp_err_t err, const char *message) {
        printf("RESULT err=%s message=%s\n", rd_kafka_err2name(err), message ? message : "");
}

/** Waits for the admin result event of `type` on `queue`. */
static rd_kafka_event_t *wait_result(rd_kafka_queue_t *queue, rd_kafka_event_type_t type) {
        for (;;) {
                rd_kafka_event_t *ev = rd_kafka_queue_poll(queue, TIMEOUT_MS + 5000);
                if (!ev)
                        die("no admin result in time");
                if (rd_kafka_event_type(ev) == type)
                        return ev;
                rd_kafka_event_destroy(ev);
        }
}

/** The answer of a config resource (describe prints its entries first). */
static void print_resource(const rd_kafka_ConfigResource_t *res, int with_entries) {
        size_t cnt, i;
        const rd_kafka_ConfigEntry_t **entries = rd_kafka_ConfigResource_configs(res, &cnt);
        for (i = 0; with_entries && i < cnt; i++) {
                const char *value = rd_kafka_ConfigEntry_value(entries[i]);
                printf("CONFIG name=%s source=%s default=%d value=%s\n", rd_kafka_ConfigEntry_name(entries[i]),
                       rd_kafka_ConfigSource_name(rd_kafka_ConfigEntry_source(entries[i])),
                       rd_kafka_ConfigEntry_is_default(entries[i]), value ? value : "(null)");
        }
        print_result(rd_kafka_ConfigResource_error(res), rd_kafka_ConfigResource_error_string(res));
}

/** Splits "NAME=VALUE" in place; returns VALUE, or NULL when there is no '='. */
static char *split_pair(char *arg) {
        char *eq = strchr(arg, '=');
        if (!eq)
                return NULL;
        *eq = '\0';
        return eq + 1;
}

static rd_kafka_AlterConfigOpType_t parse_op(const char *op) {
        if (!strcmp(op, "set"))
                return RD_KAFKA_ALTER_CONFIG_OP_TYPE_SET;
        if (!strcmp(op, "delete"))
                return RD_KAFKA_ALTER_CONFIG_OP_TYPE_DELETE;
        if (!strcmp(op, "append"))
                return RD_KAFKA_ALTER_CONFIG_OP_TYPE_APPEND;
        if (!strcmp(op, "subtract"))
                return RD_KAFKA_ALTER_CONFIG_OP_TYPE_SUBTRACT;
        die("OP must be set, delete, append or subtract");
        return RD_KAFKA_ALTER_CONFIG_OP_TYPE_SET;
}

/** describe, describe-broker, alter, replace: one config resource, one request. */
static void config_command(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts, rd_kafka_queue_t *queue,
                           const char *cmd, int argc, char **argv) {
        const int broker               = !strcmp(cmd, "describe-broker");
        rd_kafka_ConfigResource_t *res = rd_kafka_ConfigResource_new(
            broker ? RD_KAFKA_RESOURCE_BROKER : RD_KAFKA_RESOURCE_TOPIC, argv[0]);
        rd_kafka_event_t *ev;
        const rd_kafka_ConfigResource_t **results;
        size_t cnt;
        int i;

        for (i = 1; i < argc; i++) {
                char *arg = argv[i];
                if (!strcmp(cmd, "describe")) {
                        /* The value is not sent: librdkafka only refuses a NULL one. */
                        if (rd_kafka_ConfigResource_set_config(res, arg, ""))
                                die("bad config name");
                } else if (!strcmp(cmd, "replace")) {
                        char *value = split_pair(arg);
                        if (!value)
                                die("replace takes NAME=VALUE");
                        rd_kafka_ConfigResource_set_config(res, arg, value);
                } else {
                        char *colon = strchr(arg, ':');
                        char *value;
                        rd_kafka_error_t *error;
                        if (!colon)
                                die("alter takes OP:NAME[=VALUE]");
                        *colon = '\0';
                        value  = split_pair(colon + 1);
                        error  = rd_kafka_ConfigResource_add_incremental_config(res, colon + 1, parse_op(arg), value);
                        if (error)
                                die(rd_kafka_error_string(error));
                }
        }
        if (!strcmp(cmd, "alter")) {
                rd_kafka_IncrementalAlterConfigs(rk, &res, 1, opts, queue);
                ev      = wait_result(queue, RD_KAFKA_EVENT_INCREMENTALALTERCONFIGS_RESULT);
                results = rd_kafka_IncrementalAlterConfigs_result_resources(
                    rd_kafka_event_IncrementalAlterConfigs_result(ev), &cnt);
        } else if (!strcmp(cmd, "replace")) {
                rd_kafka_AlterConfigs(rk, &res, 1, opts, queue);
                ev      = wait_result(queue, RD_KAFKA_EVENT_ALTERCONFIGS_RESULT);
                results = rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(ev), &cnt);
        } else {
                rd_kafka_DescribeConfigs(rk, &res, 1, opts, queue);
                ev      = wait_result(queue, RD_KAFKA_EVENT_DESCRIBECONFIGS_RESULT);
                results = rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev), &cnt);
        }
        /* A request-level failure (e.g. no broker supports the API) comes without resources. */
        if (rd_kafka_event_error(ev) || cnt != 1)
                print_result(rd_kafka_event_error(ev), rd_kafka_event_error_string(ev));
        else
                print_resource(results[0], !strncmp(cmd, "describe", 8));
        rd_kafka_event_destroy(ev);
        rd_kafka_ConfigResource_destroy(res);
}

static void print_topic_results(rd_kafka_event_t *ev, const rd_kafka_topic_result_t **results, size_t cnt) {
        if (rd_kafka_event_error(ev) || cnt != 1)
                print_result(rd_kafka_event_error(ev), rd_kafka_event_error_string(ev));
        else
                print_result(rd_kafka_topic_result_error(results[0]), rd_kafka_topic_result_error_string(results[0]));
}

static void create_topic(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts, rd_kafka_queue_t *queue, int argc,
                         char **argv) {
        char errstr[512];
        rd_kafka_NewTopic_t *topic;
        rd_kafka_event_t *ev;
        const rd_kafka_topic_result_t **results;
        size_t cnt;
        int i;
        if (argc < 3)
                die("create-topic TOPIC PARTITIONS RF [NAME=VALUE...]");
        topic = rd_kafka_NewTopic_new(argv[0], atoi(argv[1]), atoi(argv[2]), errstr, sizeof(errstr));
        if (!topic)
                die(errstr);
        for (i = 3; i < argc; i++) {
                char *value = split_pair(argv[i]);
                if (!value || rd_kafka_NewTopic_set_config(topic, argv[i], value))
                        die("create-topic takes NAME=VALUE configs");
        }
        rd_kafka_CreateTopics(rk, &topic, 1, opts, queue);
        ev      = wait_result(queue, RD_KAFKA_EVENT_CREATETOPICS_RESULT);
        results = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
        print_topic_results(ev, results, cnt);
        rd_kafka_event_destroy(ev);
        rd_kafka_NewTopic_destroy(topic);
}

static void create_partitions(rd_kafka_t *rk, rd_kafka_AdminOptions_t *opts, rd_kafka_queue_t *queue,
                              int argc, char **argv) {
        char errstr[512];
        rd_kafka_NewPartitions_t *np;
        rd_kafka_event_t *ev;
        const rd_kafka_topic_result_t **results;
        size_t cnt;
        if (argc != 2)
                die("create-partitions TOPIC COUNT");
        np = rd_kafka_NewPartitions_new(argv[0], (size_t)atoi(argv[1]), errstr, sizeof(errstr));
        if (!np)
                die(errstr);
        rd_kafka_CreatePartitions(rk, &np, 1, opts, queue);
        ev      = wait_result(queue, RD_KAFKA_EVENT_CREATEPARTITIONS_RESULT);
        results = rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(ev), &cnt);
        print_topic_results(ev, results, cnt);
        rd_kafka_event_destroy(ev);
        rd_kafka_NewPartitions_destroy(np);
}

int main(int argc, char **argv) {
        char errstr[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        rd_kafka_t *rk;
        rd_kafka_queue_t *queue;
        rd_kafka_AdminOptions_t *opts;
        int at = 2, validate_only = 0;
        const char *cmd;

        if (argc >= 3 && !strcmp(argv[2], "--validate-only")) {
                validate_only = 1;
                at++;
        }
        if (argc < at + 2)
                die("usage: admin-client BOOTSTRAP [--validate-only] COMMAND ARGS... (see admin-client.c)");
        cmd = argv[at];
        if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr)))
                die(errstr);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk)
                die(errstr);
        queue = rd_kafka_queue_new(rk);
        opts  = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ANY);
        if (rd_kafka_AdminOptions_set_request_timeout(opts, TIMEOUT_MS, errstr, sizeof(errstr)) ||
            (validate_only && rd_kafka_AdminOptions_set_validate_only(opts, 1, errstr, sizeof(errstr))))
                die(errstr);

        if (!strcmp(cmd, "describe") || !strcmp(cmd, "describe-broker") || !strcmp(cmd, "alter") ||
            !strcmp(cmd, "replace"))
                config_command(rk, opts, queue, cmd, argc - at - 1, argv + at + 1);
        else if (!strcmp(cmd, "create-topic"))
                create_topic(rk, opts, queue, argc - at - 1, argv + at + 1);
        else if (!strcmp(cmd, "create-partitions"))
                create_partitions(rk, opts, queue, argc - at - 1, argv + at + 1);
        else
                die("unknown command");
        fflush(stdout);

        rd_kafka_AdminOptions_destroy(opts);
        rd_kafka_queue_destroy(queue);
        rd_kafka_destroy(rk);
        return 0;
}
