/*
 * DescribeConfigs v0-v4 (v4 flexible) for TOPIC resources, #included by topic-admin.c. Every
 * topic config Kafka defines is answered, as a broker does: the values set on the topic with
 * source DYNAMIC_TOPIC_CONFIG (v0: is_default false), the others with their default and source
 * DEFAULT_CONFIG (v0: is_default true), so clients must tell the two apart.
 */

struct describe_resource {
        int8_t type;
        char *name;
        int32_t name_cnt; /* -1: every config */
        char **names;
};

static void describe_resources_free(struct describe_resource *res, int32_t cnt) {
        int32_t i, j;
        if (!res)
                return;
        for (i = 0; i < cnt; i++) {
                for (j = 0; j < res[i].name_cnt && res[i].names; j++)
                        rd_free(res[i].names[j]);
                rd_free(res[i].names);
                rd_free(res[i].name);
        }
        rd_free(res);
}

static int describe_wants(const struct describe_resource *res, const char *name) {
        int32_t j;
        if (res->name_cnt < 0)
                return 1;
        for (j = 0; j < res->name_cnt; j++)
                if (res->names[j] && !strcmp(res->names[j], name))
                        return 1;
        return 0;
}

static void write_config_entry(rd_kafka_buf_t *resp, int16_t version, const struct config_def *def,
                               const char *set_value, rd_bool_t include_synonyms) {
        const char *value  = set_value ? set_value : def->dflt;
        const int8_t source = set_value ? CONFIG_SOURCE_DYNAMIC_TOPIC : CONFIG_SOURCE_DEFAULT;
        rd_kafka_buf_write_str(resp, def->name, -1);
        rd_kafka_buf_write_str(resp, value, -1);
        rd_kafka_buf_write_bool(resp, rd_false); /* ReadOnly */
        if (version == 0)
                rd_kafka_buf_write_bool(resp, !set_value); /* IsDefault */
        else
                rd_kafka_buf_write_i8(resp, source);
        rd_kafka_buf_write_bool(resp, rd_false); /* IsSensitive */
        if (version >= 1) {
                /* Synonyms: only the entry itself (the test bed has no broker-level values). */
                rd_kafka_buf_write_arraycnt(resp, include_synonyms ? 1 : 0);
                if (include_synonyms) {
                        rd_kafka_buf_write_str(resp, def->name, -1);
                        rd_kafka_buf_write_str(resp, value, -1);
                        rd_kafka_buf_write_i8(resp, source);
                        rd_kafka_buf_write_tags_empty(resp);
                }
        }
        if (version >= 3) {
                rd_kafka_buf_write_i8(resp, (int8_t)def->type);
                rd_kafka_buf_write_str(resp, NULL, -1); /* Documentation */
        }
        rd_kafka_buf_write_tags_empty(resp);
}

static void write_described(rd_kafka_buf_t *resp, int16_t version, rd_kafka_mock_cluster_t *mcluster,
                            const struct describe_resource *res, rd_kafka_resp_err_t injected,
                            rd_bool_t include_synonyms) {
        char message[MESSAGE_MAX]           = "";
        int16_t err                         = (int16_t)injected;
        const rd_kafka_mock_topic_t *mtopic = NULL;
        const struct config_set *set;
        int i, cnt = 0;

        if (injected)
                snprintf(message, sizeof(message), "%s", rd_kafka_err2str(injected));
        else if (res->type == RESOURCE_TOPIC) {
                mtopic = res->name ? rd_kafka_mock_topic_find(mcluster, res->name) : NULL;
                if (!mtopic) {
                        err = ERR_UNKNOWN_TOPIC_OR_PART;
                        snprintf(message, sizeof(message), "The topic '%s' does not exist.",
                                 res->name ? res->name : "");
                }
        } else if (res->type != RESOURCE_BROKER) {
                err = ERR_INVALID_REQUEST_;
                snprintf(message, sizeof(message), "the test bed describes no resource type %d", res->type);
        }
        rd_kafka_buf_write_i16(resp, err);
        rd_kafka_buf_write_str(resp, err ? message : NULL, -1);
        rd_kafka_buf_write_i8(resp, res->type);
        rd_kafka_buf_write_str(resp, res->name, -1);
        if (!mtopic) {
                /* A failed resource, or a BROKER one: the test bed keeps no broker configs. */
                rd_kafka_buf_write_arraycnt(resp, 0);
                rd_kafka_buf_write_tags_empty(resp);
                return;
        }
        set = topic_configs_of(mtopic);
        for (i = 0; i < CONFIG_DEF_CNT; i++)
                cnt += describe_wants(res, config_defs[i].name);
        rd_kafka_buf_write_arraycnt(resp, cnt);
        for (i = 0; i < CONFIG_DEF_CNT; i++) {
                if (describe_wants(res, config_defs[i].name))
                        write_config_entry(resp, version, &config_defs[i],
                                           config_set_get(set, config_defs[i].name), include_synonyms);
        }
        rd_kafka_buf_write_tags_empty(resp);
}

static int handle_describe_configs(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        const rd_bool_t log_decode_errors = rd_true;
        rd_kafka_mock_cluster_t *mcluster = mconn->broker->cluster;
        const int16_t version             = rkbuf->rkbuf_reqhdr.ApiVersion;
        rd_kafka_buf_t *resp              = rd_kafka_mock_buf_new_response(rkbuf);
        struct describe_resource *res     = NULL;
        rd_bool_t include_synonyms = rd_false, include_documentation = rd_false;
        rd_kafka_resp_err_t injected;
        int32_t cnt = 0, i, j;

        rd_kafka_buf_read_arraycnt(rkbuf, &cnt, 10000);
        if (cnt < 0)
                cnt = 0;
        res = rd_calloc(cnt ? cnt : 1, sizeof(*res));
        for (i = 0; i < cnt; i++) {
                rd_kafkap_str_t name;
                int32_t name_cnt;
                rd_kafka_buf_read_i8(rkbuf, &res[i].type);
                rd_kafka_buf_read_str(rkbuf, &name);
                res[i].name = str_dup_or_null(&name);
                rd_kafka_buf_read_arraycnt(rkbuf, &name_cnt, 10000);
                res[i].name_cnt = name_cnt;
                if (name_cnt > 0)
                        res[i].names = rd_calloc(name_cnt, sizeof(*res[i].names));
                for (j = 0; j < name_cnt; j++) {
                        rd_kafkap_str_t config_name;
                        rd_kafka_buf_read_str(rkbuf, &config_name);
                        res[i].names[j] = str_dup_or_null(&config_name);
                }
                rd_kafka_buf_skip_tags(rkbuf);
        }
        if (version >= 1)
                rd_kafka_buf_read_bool(rkbuf, &include_synonyms);
        if (version >= 3)
                rd_kafka_buf_read_bool(rkbuf, &include_documentation);
        (void)include_documentation; /* documentation is always null */

        injected = rd_kafka_mock_next_request_error(mconn, resp);
        rd_kafka_buf_write_i32(resp, 0); /* ThrottleTimeMs */
        rd_kafka_buf_write_arraycnt(resp, cnt);
        for (i = 0; i < cnt; i++)
                write_described(resp, version, mcluster, &res[i], injected, include_synonyms);
        describe_resources_free(res, cnt);
        rd_kafka_mock_connection_send_response(mconn, resp);
        return 0;

err_parse:
        describe_resources_free(res, cnt);
        rd_kafka_buf_destroy(resp);
        return -1;
}
