/*
 * Topic admin requests librdkafka 2.15.1's mock cluster does not have, kept as close to Apache
 * Kafka's answers as we could: CreatePartitions (37), DescribeConfigs (32), AlterConfigs (33) and
 * IncrementalAlterConfigs (44); topic configs live in topic-configs.c. #included by launcher.c,
 * whose CreateTopics handler stores the configs a request gives. All handlers run on the mock
 * cluster's thread, which owns the topics and their partitions.
 *
 * Where they differ from Kafka (a test through them proves nothing about these):
 * - no broker configs: DescribeConfigs answers a BROKER resource with no entries, the alters
 *   refuse it (INVALID_REQUEST);
 * - synonyms hold only the entry itself; documentation is null;
 * - CreatePartitions checks an explicit replica assignment's size and broker ids, then places the
 *   new partitions as the mock places a new topic's (round robin, random leader);
 * - no controller check (NOT_CONTROLLER is never answered), no quotas, no create policies.
 *
 * MOCK_KAFKA_NO_TOPIC_ADMIN=1 in the launcher's environment leaves these handlers out and makes
 * CreateTopics ignore configs again: upstream's mock, to watch the tests of these fail.
 */
#include "topic-configs.c"

#define ERR_UNKNOWN_TOPIC_OR_PART 3
#define ERR_INVALID_PARTITIONS_ 37
#define ERR_INVALID_REPLICA_ASSIGNMENT 39
#define ERR_INVALID_REQUEST_ 42
#define RESOURCE_TOPIC 2
#define RESOURCE_BROKER 4
#define OP_SET 0
#define OP_DELETE 1
#define OP_APPEND 2
#define OP_SUBTRACT 3
#define MESSAGE_MAX 512

/* Off with MOCK_KAFKA_NO_TOPIC_ADMIN=1 (see above). */
static int topic_admin_enabled = 1;

static char *str_dup_or_null(const rd_kafkap_str_t *s) {
        return RD_KAFKAP_STR_IS_NULL(s) ? NULL : RD_KAFKAP_STR_DUP(s);
}

/** One resource of an alter request: its entries, with op = OP_SET for (full) AlterConfigs. */
struct alter_resource {
        int8_t type;
        char *name;
        int32_t cnt;
        struct alter_entry {
                char *name;
                int8_t op;
                char *value; /* NULL: the request sent null */
        } *entries;
};

static void alter_resources_free(struct alter_resource *res, int32_t cnt) {
        int32_t i, j;
        if (!res)
                return;
        for (i = 0; i < cnt; i++) {
                for (j = 0; j < res[i].cnt && res[i].entries; j++) {
                        rd_free(res[i].entries[j].name);
                        rd_free(res[i].entries[j].value);
                }
                rd_free(res[i].entries);
                rd_free(res[i].name);
        }
        rd_free(res);
}

/** Reads the resources of AlterConfigs or (incremental) IncrementalAlterConfigs; -1 on bad bytes. */
static int read_alter_resources(rd_kafka_buf_t *rkbuf, rd_bool_t incremental, int32_t *cntp,
                                struct alter_resource **out) {
        const rd_bool_t log_decode_errors = rd_true;
        int32_t cnt, i, j;
        struct alter_resource *res;

        *out  = NULL;
        *cntp = 0;
        rd_kafka_buf_read_arraycnt(rkbuf, &cnt, 10000);
        if (cnt < 0)
                cnt = 0;
        res   = rd_calloc(cnt ? cnt : 1, sizeof(*res));
        *out  = res;
        *cntp = cnt;
        for (i = 0; i < cnt; i++) {
                rd_kafkap_str_t name;
                int32_t entry_cnt;
                rd_kafka_buf_read_i8(rkbuf, &res[i].type);
                rd_kafka_buf_read_str(rkbuf, &name);
                res[i].name = str_dup_or_null(&name);
                rd_kafka_buf_read_arraycnt(rkbuf, &entry_cnt, 10000);
                if (entry_cnt < 0)
                        entry_cnt = 0;
                res[i].entries = rd_calloc(entry_cnt ? entry_cnt : 1, sizeof(*res[i].entries));
                res[i].cnt     = entry_cnt;
                for (j = 0; j < entry_cnt; j++) {
                        rd_kafkap_str_t config_name, value;
                        rd_kafka_buf_read_str(rkbuf, &config_name);
                        res[i].entries[j].name = str_dup_or_null(&config_name);
                        res[i].entries[j].op   = OP_SET;
                        if (incremental)
                                rd_kafka_buf_read_i8(rkbuf, &res[i].entries[j].op);
                        rd_kafka_buf_read_str(rkbuf, &value);
                        res[i].entries[j].value = str_dup_or_null(&value);
                        rd_kafka_buf_skip_tags(rkbuf);
                }
                rd_kafka_buf_skip_tags(rkbuf);
        }
        return 0;

err_parse:
        return -1;
}

/** Items of a comma-separated list value, blanks around them dropped. */
static int list_items(const char *value, char ***items) {
        int cnt     = 0;
        char *copy  = rd_strdup(value);
        char *save  = NULL;
        char *tok;
        *items = NULL;
        for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                char *end;
                while (*tok == ' ')
                        tok++;
                end = tok + strlen(tok);
                while (end > tok && end[-1] == ' ')
                        *--end = '\0';
                if (!*tok)
                        continue;
                *items          = rd_realloc(*items, (cnt + 1) * sizeof(**items));
                (*items)[cnt++] = rd_strdup(tok);
        }
        rd_free(copy);
        return cnt;
}

static void list_items_free(char **items, int cnt) {
        int i;
        for (i = 0; i < cnt; i++)
                rd_free(items[i]);
        rd_free(items);
}

static int list_has(char **items, int cnt, const char *item) {
        int i;
        for (i = 0; i < cnt; i++)
                if (!strcmp(items[i], item))
                        return 1;
        return 0;
}

/**
 * APPEND / SUBTRACT as Kafka's ConfigAdminManager does them: on a list-type config only, starting
 * from the topic's value or, when none is set, the default.
 */
static int16_t apply_list_op(struct config_set *set, const struct alter_entry *e, char *message) {
        const struct config_def *def = config_def_find(e->name);
        const char *current;
        char **old_items, **op_items;
        int old_cnt, op_cnt, i;
        size_t len = 1;
        char *joined;

        if (!def) {
                snprintf(message, MESSAGE_MAX, "Unknown topic config name: %s", e->name);
                return ERR_INVALID_CONFIG;
        }
        if (def->type != TYPE_LIST) {
                snprintf(message, MESSAGE_MAX, "Config value %s is not allowed for config key: %s",
                         e->op == OP_APPEND ? "append" : "subtract", e->name);
                return ERR_INVALID_CONFIG;
        }
        current = config_set_get(set, e->name);
        old_cnt = list_items(current ? current : def->dflt, &old_items);
        op_cnt  = list_items(e->value, &op_items);
        joined  = rd_calloc(1, strlen(current ? current : def->dflt) + strlen(e->value) + 2);
        for (i = 0; i < old_cnt; i++) {
                if (e->op == OP_SUBTRACT && list_has(op_items, op_cnt, old_items[i]))
                        continue;
                if (len > 1)
                        strcat(joined, ",");
                strcat(joined, old_items[i]);
                len += strlen(old_items[i]) + 1;
        }
        for (i = 0; e->op == OP_APPEND && i < op_cnt; i++) {
                if (list_has(old_items, old_cnt, op_items[i]))
                        continue;
                if (len > 1)
                        strcat(joined, ",");
                strcat(joined, op_items[i]);
                len += strlen(op_items[i]) + 1;
        }
        config_set_put(set, e->name, joined);
        rd_free(joined);
        list_items_free(old_items, old_cnt);
        list_items_free(op_items, op_cnt);
        return 0;
}

/** Applies one resource's entries to `set` (a copy of the topic's, or empty for AlterConfigs). */
static int16_t apply_alter(struct config_set *set, const struct alter_resource *res, char *message) {
        int32_t j, k;
        for (j = 0; j < res->cnt; j++) {
                const struct alter_entry *e = &res->entries[j];
                int16_t err                 = 0;
                if (!e->name || (!e->value && e->op != OP_DELETE)) {
                        snprintf(message, MESSAGE_MAX, "Null value not supported for : %s",
                                 e->name ? e->name : "(null)");
                        return ERR_INVALID_REQUEST_;
                }
                for (k = 0; k < j; k++) {
                        if (!strcmp(res->entries[k].name, e->name)) {
                                snprintf(message, MESSAGE_MAX, "Error due to duplicate config keys");
                                return ERR_INVALID_REQUEST_;
                        }
                }
                if (e->op == OP_SET)
                        config_set_put(set, e->name, e->value);
                else if (e->op == OP_DELETE)
                        config_set_remove(set, e->name);
                else if (e->op == OP_APPEND || e->op == OP_SUBTRACT)
                        err = apply_list_op(set, e, message);
                else {
                        snprintf(message, MESSAGE_MAX, "Unknown alter config operation %d", e->op);
                        err = ERR_INVALID_REQUEST_;
                }
                if (err)
                        return err;
        }
        return config_set_check(set, message, MESSAGE_MAX);
}

/** The outcome of one alter resource; changes the topic's configs unless validate_only. */
static int16_t alter_one(rd_kafka_mock_cluster_t *mcluster, const struct alter_resource *all, int32_t i,
                         rd_bool_t incremental, rd_bool_t validate_only, char *message) {
        const struct alter_resource *res = &all[i];
        rd_kafka_mock_topic_t *mtopic;
        struct config_set next = {0};
        int16_t err;
        int32_t k;

        if (res->type != RESOURCE_TOPIC) {
                snprintf(message, MESSAGE_MAX, "the test bed keeps no configs for resource type %d", res->type);
                return ERR_INVALID_REQUEST_;
        }
        for (k = 0; k < i; k++) {
                if (all[k].type == res->type && all[k].name && res->name && !strcmp(all[k].name, res->name)) {
                        snprintf(message, MESSAGE_MAX, "Duplicate resource in request: %s", res->name);
                        return ERR_INVALID_REQUEST_;
                }
        }
        if (!res->name || !(mtopic = rd_kafka_mock_topic_find(mcluster, res->name))) {
                snprintf(message, MESSAGE_MAX, "The topic '%s' does not exist.", res->name ? res->name : "");
                return ERR_UNKNOWN_TOPIC_OR_PART;
        }
        /* Incremental: the topic's values plus the changes. AlterConfigs: the request's only. */
        if (incremental)
                config_set_copy(&next, topic_configs_of(mtopic));
        err = apply_alter(&next, res, message);
        if (!err && !validate_only)
                config_set_replace(topic_configs_of(mtopic), &next);
        config_set_clear(&next);
        return err;
}

/** AlterConfigs v0-v2 and IncrementalAlterConfigs v0-v1 share request and response layouts. */
static int handle_alter(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf, rd_bool_t incremental) {
        const rd_bool_t log_decode_errors = rd_true;
        rd_kafka_mock_cluster_t *mcluster = mconn->broker->cluster;
        rd_kafka_buf_t *resp              = rd_kafka_mock_buf_new_response(rkbuf);
        struct alter_resource *res        = NULL;
        rd_bool_t validate_only           = rd_false;
        rd_kafka_resp_err_t injected;
        int32_t cnt, i;

        if (read_alter_resources(rkbuf, incremental, &cnt, &res) == -1)
                goto err_parse;
        rd_kafka_buf_read_bool(rkbuf, &validate_only);

        /* Errors pushed for the API key apply to every resource of the request. */
        injected = rd_kafka_mock_next_request_error(mconn, resp);
        rd_kafka_buf_write_i32(resp, 0); /* ThrottleTimeMs */
        rd_kafka_buf_write_arraycnt(resp, cnt);
        for (i = 0; i < cnt; i++) {
                char message[MESSAGE_MAX] = "";
                int16_t err               = (int16_t)injected;
                if (!err)
                        err = alter_one(mcluster, res, i, incremental, validate_only, message);
                rd_kafka_buf_write_i16(resp, err);
                rd_kafka_buf_write_str(resp, !err ? NULL : injected ? rd_kafka_err2str(injected) : message, -1);
                rd_kafka_buf_write_i8(resp, res[i].type);
                rd_kafka_buf_write_str(resp, res[i].name, -1);
                rd_kafka_buf_write_tags_empty(resp);
        }
        alter_resources_free(res, cnt);
        rd_kafka_mock_connection_send_response(mconn, resp);
        return 0;

err_parse:
        alter_resources_free(res, cnt);
        rd_kafka_buf_destroy(resp);
        return -1;
}

static int handle_alter_configs(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        return handle_alter(mconn, rkbuf, rd_false);
}

static int handle_incremental_alter_configs(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        return handle_alter(mconn, rkbuf, rd_true);
}

#include "topic-describe.c"
#include "topic-partitions.c"

/**
 * Adds the handlers to the cluster's table (MOCK_KAFKA_NO_TOPIC_ADMIN=1: leaves them out). Call
 * before any client knows the bootstrap addresses: nothing else reads the table then.
 */
static void register_topic_admin_handlers(rd_kafka_mock_cluster_t *mcluster) {
        const char *off = getenv("MOCK_KAFKA_NO_TOPIC_ADMIN");
        if (off && !strcmp(off, "1")) {
                topic_admin_enabled = 0;
                return;
        }
        /* {MinVersion, MaxVersion, FlexVersion (first flexible), handler}, as Kafka 3.7 numbers them. */
        mcluster->api_handlers[RD_KAFKAP_CreatePartitions] =
            (struct rd_kafka_mock_api_handler) {0, 3, 2, handle_create_partitions};
        mcluster->api_handlers[RD_KAFKAP_DescribeConfigs] =
            (struct rd_kafka_mock_api_handler) {0, 4, 4, handle_describe_configs};
        mcluster->api_handlers[RD_KAFKAP_AlterConfigs] =
            (struct rd_kafka_mock_api_handler) {0, 2, 2, handle_alter_configs};
        mcluster->api_handlers[RD_KAFKAP_IncrementalAlterConfigs] =
            (struct rd_kafka_mock_api_handler) {0, 1, 1, handle_incremental_alter_configs};
}
