/*
 * group-client: librdkafka's own consumer-group listing, as an independent client that checks
 * the test broker's ListGroups and DescribeGroups (testbed/mock-kafka/group-admin.c). Built by
 * scripts/testbed/build-mock-kafka.sh against the same librdkafka.a as the mock broker (the
 * client side of librdkafka is not patched); driven by test/integration/testbed/groups.test.ts.
 *
 * Usage: group-client legacy|admin BOOTSTRAP [GROUP...]
 *        group-client offsets BOOTSTRAP GROUP
 *        group-client alter BOOTSTRAP GROUP TOPIC:PARTITION:OFFSET...
 *   legacy  rd_kafka_list_groups(): ListGroups v0 to every broker, then DescribeGroups v0 to
 *           each group's broker (all groups, or each GROUP named)
 *   admin   rd_kafka_ListConsumerGroups() (ListGroups at the newest version both sides speak,
 *           v5 here: states and types) and rd_kafka_DescribeConsumerGroups() of every listed
 *           group, or of each GROUP named
 *   offsets rd_kafka_ListConsumerGroupOffsets() of every partition the group committed
 *           (OffsetFetch with a null topic list)
 *   alter   rd_kafka_AlterConsumerGroupOffsets(): an admin commit (OffsetCommit, generation -1,
 *           no member id), which Kafka accepts only while the group is Empty
 * One stdout line per fact, values without spaces:
 *   GROUP id=G state=S protocol_type=T protocol=P broker=B members=N err=E   (legacy)
 *   LISTED id=G state=S simple=0|1                                          (admin)
 *   DESCRIBED id=G state=S members=N err=E                                  (admin)
 *   MEMBER group=G id=M client_id=C host=H metadata=BYTES assignment=BYTES  (legacy)
 *   MEMBER group=G id=M client_id=C host=H assigned=TOPIC:P,...             (admin)
 *   OFFSET topic=T partition=P offset=O err=E                               (offsets)
 *   ALTERED topic=T partition=P err=E  then  RESULT err=E                   (alter)
 *   DONE
 * E is librdkafka's error name. Exit status 0 unless a call fails as a whole (then 1, the error
 * on stderr) or the arguments are wrong (2).
 */
/* librdkafka 2.15.1 from the test bed source tree, never the system 2.0.2 headers. */
#include "rdkafka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMEOUT_MS 20000

static void die(int status, const char *what, const char *detail) {
        fprintf(stderr, "group-client: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        exit(status);
}

static const char *or_empty(const char *s) {
        return s && *s ? s : "-";
}

static void print_legacy_group(const struct rd_kafka_group_info *g) {
        int m;
        printf("GROUP id=%s state=%s protocol_type=%s protocol=%s broker=%d members=%d err=%s\n", g->group,
               or_empty(g->state), or_empty(g->protocol_type), or_empty(g->protocol), g->broker.id,
               g->member_cnt, rd_kafka_err2name(g->err));
        for (m = 0; m < g->member_cnt; m++) {
                const struct rd_kafka_group_member_info *mi = &g->members[m];
                printf("MEMBER group=%s id=%s client_id=%s host=%s metadata=%d assignment=%d\n", g->group,
                       mi->member_id, or_empty(mi->client_id), or_empty(mi->client_host),
                       mi->member_metadata_size, mi->member_assignment_size);
        }
}

static void run_legacy(rd_kafka_t *rk, int group_cnt, char **groups) {
        int i, n = group_cnt > 0 ? group_cnt : 1;
        for (i = 0; i < n; i++) {
                const struct rd_kafka_group_list *list;
                rd_kafka_resp_err_t err =
                    rd_kafka_list_groups(rk, group_cnt > 0 ? groups[i] : NULL, &list, TIMEOUT_MS);
                int g;
                if (err)
                        die(1, "rd_kafka_list_groups failed", rd_kafka_err2name(err));
                for (g = 0; g < list->group_cnt; g++)
                        print_legacy_group(&list->groups[g]);
                rd_kafka_group_list_destroy(list);
        }
}

static rd_kafka_event_t *wait_result(rd_kafka_queue_t *q, rd_kafka_event_type_t type) {
        rd_kafka_event_t *ev = rd_kafka_queue_poll(q, TIMEOUT_MS);
        if (!ev || rd_kafka_event_type(ev) != type)
                die(1, "no admin result", NULL);
        if (rd_kafka_event_error(ev))
                die(1, "admin call failed", rd_kafka_event_error_string(ev));
        return ev;
}

/** Lists every group; returns their ids (strdup'ed) in *ids. */
static size_t admin_list(rd_kafka_t *rk, rd_kafka_queue_t *q, char ***ids) {
        rd_kafka_event_t *ev;
        const rd_kafka_ConsumerGroupListing_t **listed;
        size_t cnt, i;
        rd_kafka_ListConsumerGroups(rk, NULL, q);
        ev     = wait_result(q, RD_KAFKA_EVENT_LISTCONSUMERGROUPS_RESULT);
        listed = rd_kafka_ListConsumerGroups_result_valid(rd_kafka_event_ListConsumerGroups_result(ev), &cnt);
        *ids   = calloc(cnt ? cnt : 1, sizeof(**ids));
        for (i = 0; i < cnt; i++) {
                (*ids)[i] = strdup(rd_kafka_ConsumerGroupListing_group_id(listed[i]));
                printf("LISTED id=%s state=%s simple=%d\n", (*ids)[i],
                       rd_kafka_consumer_group_state_name(rd_kafka_ConsumerGroupListing_state(listed[i])),
                       rd_kafka_ConsumerGroupListing_is_simple_consumer_group(listed[i]));
        }
        rd_kafka_event_destroy(ev);
        return cnt;
}

static void print_admin_member(const char *group, const rd_kafka_MemberDescription_t *member) {
        const rd_kafka_MemberAssignment_t *assignment = rd_kafka_MemberDescription_assignment(member);
        const rd_kafka_topic_partition_list_t *parts =
            assignment ? rd_kafka_MemberAssignment_partitions(assignment) : NULL;
        int p;
        printf("MEMBER group=%s id=%s client_id=%s host=%s assigned=", group,
               rd_kafka_MemberDescription_consumer_id(member),
               or_empty(rd_kafka_MemberDescription_client_id(member)),
               or_empty(rd_kafka_MemberDescription_host(member)));
        for (p = 0; parts && p < parts->cnt; p++)
                printf("%s%s:%d", p ? "," : "", parts->elems[p].topic, parts->elems[p].partition);
        printf("%s\n", parts && parts->cnt ? "" : "-");
}

static void admin_describe(rd_kafka_t *rk, rd_kafka_queue_t *q, const char **ids, size_t cnt) {
        rd_kafka_event_t *ev;
        const rd_kafka_ConsumerGroupDescription_t **described;
        size_t n, i;
        if (cnt == 0)
                return;
        rd_kafka_DescribeConsumerGroups(rk, ids, cnt, NULL, q);
        ev        = wait_result(q, RD_KAFKA_EVENT_DESCRIBECONSUMERGROUPS_RESULT);
        described = rd_kafka_DescribeConsumerGroups_result_groups(rd_kafka_event_DescribeConsumerGroups_result(ev), &n);
        for (i = 0; i < n; i++) {
                const rd_kafka_ConsumerGroupDescription_t *g = described[i];
                const rd_kafka_error_t *error = rd_kafka_ConsumerGroupDescription_error(g);
                const char *id                = rd_kafka_ConsumerGroupDescription_group_id(g);
                size_t m, members = rd_kafka_ConsumerGroupDescription_member_count(g);
                printf("DESCRIBED id=%s state=%s members=%zu err=%s\n", id,
                       rd_kafka_consumer_group_state_name(rd_kafka_ConsumerGroupDescription_state(g)), members,
                       error ? rd_kafka_error_name(error) : "NO_ERROR");
                for (m = 0; m < members; m++)
                        print_admin_member(id, rd_kafka_ConsumerGroupDescription_member(g, m));
        }
        rd_kafka_event_destroy(ev);
}

static void run_admin(rd_kafka_t *rk, int group_cnt, char **groups) {
        rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
        char **ids          = NULL;
        size_t cnt, i;
        if (group_cnt > 0) {
                admin_describe(rk, q, (const char **)groups, (size_t)group_cnt);
        } else {
                cnt = admin_list(rk, q, &ids);
                admin_describe(rk, q, (const char **)ids, cnt);
                for (i = 0; i < cnt; i++)
                        free(ids[i]);
                free(ids);
        }
        rd_kafka_queue_destroy(q);
}

static void print_partitions(const char *tag, const rd_kafka_topic_partition_list_t *parts, int offsets) {
        int p;
        for (p = 0; parts && p < parts->cnt; p++) {
                const rd_kafka_topic_partition_t *tp = &parts->elems[p];
                if (offsets)
                        printf("%s topic=%s partition=%d offset=%lld err=%s\n", tag, tp->topic, tp->partition,
                               (long long)tp->offset, rd_kafka_err2name(tp->err));
                else
                        printf("%s topic=%s partition=%d err=%s\n", tag, tp->topic, tp->partition,
                               rd_kafka_err2name(tp->err));
        }
}

/** The one group result of an offsets call: its partitions, then RESULT with the group's error. */
static void print_group_result(const rd_kafka_group_result_t *const *results, size_t cnt, const char *tag,
                               int offsets) {
        const rd_kafka_error_t *error;
        if (cnt != 1)
                die(1, "expected one group result", NULL);
        error = rd_kafka_group_result_error(results[0]);
        print_partitions(tag, rd_kafka_group_result_partitions(results[0]), offsets);
        printf("RESULT err=%s\n", error ? rd_kafka_error_name(error) : "NO_ERROR");
}

static void run_offsets(rd_kafka_t *rk, const char *group) {
        rd_kafka_queue_t *q                           = rd_kafka_queue_new(rk);
        rd_kafka_ListConsumerGroupOffsets_t *request  = rd_kafka_ListConsumerGroupOffsets_new(group, NULL);
        const rd_kafka_group_result_t **results;
        rd_kafka_event_t *ev;
        size_t cnt;
        rd_kafka_ListConsumerGroupOffsets(rk, &request, 1, NULL, q);
        ev      = wait_result(q, RD_KAFKA_EVENT_LISTCONSUMERGROUPOFFSETS_RESULT);
        results = rd_kafka_ListConsumerGroupOffsets_result_groups(rd_kafka_event_ListConsumerGroupOffsets_result(ev), &cnt);
        print_group_result(results, cnt, "OFFSET", 1);
        rd_kafka_event_destroy(ev);
        rd_kafka_ListConsumerGroupOffsets_destroy(request);
        rd_kafka_queue_destroy(q);
}

static void run_alter(rd_kafka_t *rk, const char *group, int cnt, char **specs) {
        rd_kafka_queue_t *q                         = rd_kafka_queue_new(rk);
        rd_kafka_topic_partition_list_t *parts      = rd_kafka_topic_partition_list_new(cnt);
        rd_kafka_AlterConsumerGroupOffsets_t *alter;
        const rd_kafka_group_result_t **results;
        rd_kafka_event_t *ev;
        size_t n;
        int i;
        for (i = 0; i < cnt; i++) {
                char topic[256];
                int partition;
                long long offset;
                if (sscanf(specs[i], "%255[^:]:%d:%lld", topic, &partition, &offset) != 3)
                        die(2, "expected TOPIC:PARTITION:OFFSET, got", specs[i]);
                rd_kafka_topic_partition_list_add(parts, topic, partition)->offset = offset;
        }
        alter = rd_kafka_AlterConsumerGroupOffsets_new(group, parts);
        rd_kafka_AlterConsumerGroupOffsets(rk, &alter, 1, NULL, q);
        ev      = wait_result(q, RD_KAFKA_EVENT_ALTERCONSUMERGROUPOFFSETS_RESULT);
        results = rd_kafka_AlterConsumerGroupOffsets_result_groups(rd_kafka_event_AlterConsumerGroupOffsets_result(ev), &n);
        print_group_result(results, n, "ALTERED", 0);
        rd_kafka_event_destroy(ev);
        rd_kafka_AlterConsumerGroupOffsets_destroy(alter);
        rd_kafka_topic_partition_list_destroy(parts);
        rd_kafka_queue_destroy(q);
}

int main(int argc, char **argv) {
        char errstr[512];
        rd_kafka_conf_t *conf;
        rd_kafka_t *rk;

        const char *mode = argc > 1 ? argv[1] : "";
        if (argc < 3 || (strcmp(mode, "legacy") && strcmp(mode, "admin") && strcmp(mode, "offsets") &&
                         strcmp(mode, "alter")) ||
            (!strcmp(mode, "offsets") && argc != 4) || (!strcmp(mode, "alter") && argc < 5))
                die(2, "usage: group-client legacy|admin BOOTSTRAP [GROUP...] | offsets BOOTSTRAP GROUP | "
                       "alter BOOTSTRAP GROUP TOPIC:PARTITION:OFFSET...", NULL);
        conf = rd_kafka_conf_new();
        if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[2], errstr, sizeof(errstr)) ||
            rd_kafka_conf_set(conf, "client.id", "group-client", errstr, sizeof(errstr)))
                die(2, "bad configuration", errstr);
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk)
                die(1, "rd_kafka_new failed", errstr);
        if (!strcmp(mode, "legacy"))
                run_legacy(rk, argc - 3, argv + 3);
        else if (!strcmp(mode, "admin"))
                run_admin(rk, argc - 3, argv + 3);
        else if (!strcmp(mode, "offsets"))
                run_offsets(rk, argv[3]);
        else
                run_alter(rk, argv[3], argc - 4, argv + 4);
        printf("DONE\n");
        fflush(stdout);
        rd_kafka_destroy(rk);
        return 0;
}
