/*
 * Topic configs for the mock cluster, which has none: Kafka's topic-level config definitions
 * (names, types, defaults, the checks a broker makes on a value) and a per-topic table of the
 * values set on each topic. #included by topic-admin.c; everything here runs on the mock
 * cluster's thread (the request handlers), so the table needs no lock.
 *
 * A table entry remembers the topic id it belongs to: a topic deleted and created again under
 * the same name (or auto-created by a produce) gets a new id, and the old values are dropped
 * instead of coming back, as on Kafka.
 */
#include <limits.h>
#include <strings.h>

/* Kafka's DescribeConfigsResponse.ConfigSource and ConfigType ids. */
#define CONFIG_SOURCE_DYNAMIC_TOPIC 1
#define CONFIG_SOURCE_DEFAULT 5
enum config_type { TYPE_BOOLEAN = 1, TYPE_STRING = 2, TYPE_INT = 3, TYPE_LONG = 5, TYPE_DOUBLE = 6, TYPE_LIST = 7 };

#define ERR_INVALID_CONFIG 40

struct config_def {
        const char *name;
        enum config_type type;
        const char *dflt;
        long long min;          /* numbers: smallest value allowed */
        const char *const *one_of; /* strings and list items: the values allowed, NULL = any */
};

static const char *const cleanup_policies[]  = {"compact", "delete", NULL};
static const char *const compression_types[] = {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer", NULL};
static const char *const timestamp_types[]   = {"CreateTime", "LogAppendTime", NULL};

#define NO_MIN LLONG_MIN
/* Apache Kafka 3.7's LogConfig, in its order: DescribeConfigs answers them in this order. */
static const struct config_def config_defs[] = {
    {"cleanup.policy", TYPE_LIST, "delete", NO_MIN, cleanup_policies},
    {"compression.type", TYPE_STRING, "producer", NO_MIN, compression_types},
    {"delete.retention.ms", TYPE_LONG, "86400000", 0, NULL},
    {"file.delete.delay.ms", TYPE_LONG, "60000", 0, NULL},
    {"flush.messages", TYPE_LONG, "9223372036854775807", 1, NULL},
    {"flush.ms", TYPE_LONG, "9223372036854775807", 0, NULL},
    {"follower.replication.throttled.replicas", TYPE_LIST, "", NO_MIN, NULL},
    {"index.interval.bytes", TYPE_INT, "4096", 0, NULL},
    {"leader.replication.throttled.replicas", TYPE_LIST, "", NO_MIN, NULL},
    {"local.retention.bytes", TYPE_LONG, "-2", -2, NULL},
    {"local.retention.ms", TYPE_LONG, "-2", -2, NULL},
    {"max.compaction.lag.ms", TYPE_LONG, "9223372036854775807", 1, NULL},
    {"max.message.bytes", TYPE_INT, "1048588", 0, NULL},
    {"message.downconversion.enable", TYPE_BOOLEAN, "true", NO_MIN, NULL},
    {"message.format.version", TYPE_STRING, "3.0-IV1", NO_MIN, NULL},
    {"message.timestamp.after.max.ms", TYPE_LONG, "9223372036854775807", 0, NULL},
    {"message.timestamp.before.max.ms", TYPE_LONG, "9223372036854775807", 0, NULL},
    {"message.timestamp.difference.max.ms", TYPE_LONG, "9223372036854775807", 0, NULL},
    {"message.timestamp.type", TYPE_STRING, "CreateTime", NO_MIN, timestamp_types},
    {"min.cleanable.dirty.ratio", TYPE_DOUBLE, "0.5", NO_MIN, NULL},
    {"min.compaction.lag.ms", TYPE_LONG, "0", 0, NULL},
    {"min.insync.replicas", TYPE_INT, "1", 1, NULL},
    {"preallocate", TYPE_BOOLEAN, "false", NO_MIN, NULL},
    {"remote.storage.enable", TYPE_BOOLEAN, "false", NO_MIN, NULL},
    {"retention.bytes", TYPE_LONG, "-1", NO_MIN, NULL},
    {"retention.ms", TYPE_LONG, "604800000", -1, NULL},
    {"segment.bytes", TYPE_INT, "1073741824", 14, NULL},
    {"segment.index.bytes", TYPE_INT, "10485760", 4, NULL},
    {"segment.jitter.ms", TYPE_LONG, "0", 0, NULL},
    {"segment.ms", TYPE_LONG, "604800000", 1, NULL},
    {"unclean.leader.election.enable", TYPE_BOOLEAN, "false", NO_MIN, NULL},
};
#define CONFIG_DEF_CNT ((int)(sizeof(config_defs) / sizeof(config_defs[0])))

static const struct config_def *config_def_find(const char *name) {
        int i;
        for (i = 0; i < CONFIG_DEF_CNT; i++)
                if (!strcmp(config_defs[i].name, name))
                        return &config_defs[i];
        return NULL;
}

/** One set of name = value pairs (a topic's, or a request's). */
struct config_set {
        int cnt, size;
        struct config_pair {
                char *name;
                char *value;
        } *pairs;
};

static int config_set_index(const struct config_set *set, const char *name) {
        int i;
        for (i = 0; i < set->cnt; i++)
                if (!strcmp(set->pairs[i].name, name))
                        return i;
        return -1;
}

static const char *config_set_get(const struct config_set *set, const char *name) {
        int i = config_set_index(set, name);
        return i < 0 ? NULL : set->pairs[i].value;
}

static void config_set_put(struct config_set *set, const char *name, const char *value) {
        int i = config_set_index(set, name);
        if (i >= 0) {
                rd_free(set->pairs[i].value);
                set->pairs[i].value = rd_strdup(value);
                return;
        }
        if (set->cnt == set->size) {
                set->size  = set->size ? set->size * 2 : 8;
                set->pairs = rd_realloc(set->pairs, set->size * sizeof(*set->pairs));
        }
        set->pairs[set->cnt].name    = rd_strdup(name);
        set->pairs[set->cnt++].value = rd_strdup(value);
}

static void config_set_remove(struct config_set *set, const char *name) {
        int i = config_set_index(set, name);
        if (i < 0)
                return;
        rd_free(set->pairs[i].name);
        rd_free(set->pairs[i].value);
        set->pairs[i] = set->pairs[--set->cnt];
}

static void config_set_clear(struct config_set *set) {
        int i;
        for (i = 0; i < set->cnt; i++) {
                rd_free(set->pairs[i].name);
                rd_free(set->pairs[i].value);
        }
        rd_free(set->pairs);
        memset(set, 0, sizeof(*set));
}

static void config_set_copy(struct config_set *dst, const struct config_set *src) {
        int i;
        for (i = 0; i < src->cnt; i++)
                config_set_put(dst, src->pairs[i].name, src->pairs[i].value);
}

/** Moves src's pairs into dst, replacing what dst held; src is left empty. */
static void config_set_replace(struct config_set *dst, struct config_set *src) {
        config_set_clear(dst);
        *dst = *src;
        memset(src, 0, sizeof(*src));
}

static int one_of(const char *const *allowed, const char *value, size_t len) {
        for (; *allowed; allowed++)
                if (strlen(*allowed) == len && !strncmp(*allowed, value, len))
                        return 1;
        return 0;
}

/** Checks a list's items: comma-separated, surrounding blanks ignored (as Kafka's ConfigDef). */
static int list_valid(const struct config_def *def, const char *value) {
        const char *p = value;
        if (!def->one_of)
                return 1;
        while (*p) {
                const char *end;
                size_t len;
                while (*p == ' ')
                        p++;
                end = strchr(p, ',');
                len = end ? (size_t)(end - p) : strlen(p);
                while (len > 0 && p[len - 1] == ' ')
                        len--;
                if (!one_of(def->one_of, p, len))
                        return 0;
                p += end ? (size_t)(end - p) + 1 : strlen(p);
        }
        return 1;
}

/**
 * Kafka's checks of one topic config value; returns 0, or INVALID_CONFIG with `message` (a
 * buffer of `size` bytes) saying why, worded as Kafka's ConfigException does.
 */
static int16_t config_check(const char *name, const char *value, char *message, size_t size) {
        const struct config_def *def = config_def_find(name);
        char *end                    = NULL;
        int valid                    = 1;
        const char *type_name        = "";
        if (!def) {
                snprintf(message, size, "Unknown topic config name: %s", name);
                return ERR_INVALID_CONFIG;
        }
        errno = 0;
        switch (def->type) {
        case TYPE_BOOLEAN:
                valid     = !strcasecmp(value, "true") || !strcasecmp(value, "false");
                type_name = "BOOLEAN";
                break;
        case TYPE_INT:
        case TYPE_LONG: {
                long long v = strtoll(value, &end, 10);
                valid       = *value && !*end && !errno && v >= def->min &&
                        (def->type == TYPE_LONG || (v >= INT32_MIN && v <= INT32_MAX));
                type_name   = def->type == TYPE_INT ? "INT" : "LONG";
                break;
        }
        case TYPE_DOUBLE:
                strtod(value, &end);
                valid     = *value && !*end && !errno;
                type_name = "DOUBLE";
                break;
        case TYPE_STRING:
                valid     = !def->one_of || one_of(def->one_of, value, strlen(value));
                type_name = "STRING";
                break;
        case TYPE_LIST:
                valid     = list_valid(def, value);
                type_name = "LIST";
                break;
        }
        if (valid)
                return 0;
        snprintf(message, size, "Invalid value %s for configuration %s: not a valid %s%s", value, name,
                 type_name, def->min != NO_MIN ? " in range" : "");
        return ERR_INVALID_CONFIG;
}

/** Checks every pair of `set`; the first refusal wins. */
static int16_t config_set_check(const struct config_set *set, char *message, size_t size) {
        int i;
        for (i = 0; i < set->cnt; i++) {
                int16_t err = config_check(set->pairs[i].name, set->pairs[i].value, message, size);
                if (err)
                        return err;
        }
        return 0;
}

/* The per-topic table. */
struct topic_configs {
        TAILQ_ENTRY(topic_configs) link;
        char *topic;
        rd_kafka_Uuid_t topic_id;
        struct config_set set;
};
static TAILQ_HEAD(, topic_configs) topic_config_table = TAILQ_HEAD_INITIALIZER(topic_config_table);

/** The values set on `mtopic`, created empty on first use. */
static struct config_set *topic_configs_of(const rd_kafka_mock_topic_t *mtopic) {
        struct topic_configs *tc;
        TAILQ_FOREACH(tc, &topic_config_table, link) {
                if (strcmp(tc->topic, mtopic->name))
                        continue;
                if (rd_kafka_Uuid_cmp(tc->topic_id, mtopic->id)) {
                        /* Left over from a deleted topic of the same name. */
                        config_set_clear(&tc->set);
                        tc->topic_id = mtopic->id;
                }
                return &tc->set;
        }
        tc           = rd_calloc(1, sizeof(*tc));
        tc->topic    = rd_strdup(mtopic->name);
        tc->topic_id = mtopic->id;
        TAILQ_INSERT_TAIL(&topic_config_table, tc, link);
        return &tc->set;
}

/** A new topic's configs (CreateTopics): `set` is moved into the table and left empty. */
static void topic_configs_store(rd_kafka_mock_cluster_t *mcluster, const char *topic, struct config_set *set) {
        rd_kafka_mock_topic_t *mtopic = rd_kafka_mock_topic_find(mcluster, topic);
        if (mtopic)
                config_set_replace(topic_configs_of(mtopic), set);
}
