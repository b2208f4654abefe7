/*
 * CreatePartitions v0-v3 (v2+ flexible), #included by topic-admin.c: grows a live topic.
 *
 * The mock keeps a topic's partitions in one array of structs (mtopic->partitions) and creates
 * them only with the topic (rd_kafka_mock_topic_new, whose partition set-up is static). So the
 * new partitions are made by creating a scratch topic of the missing count (the library's own
 * set-up: replicas, leader, leader epoch 0, the retention patch's limits), then every partition
 * struct is moved into one larger array. A partition struct holds the heads of five TAILQ lists,
 * whose first element points back at its head: each moved head is re-linked with TAILQ_MOVE.
 * Nothing else keeps a pointer into the array (transactions name partitions by topic and id),
 * and requests are handled one at a time on this thread, so no handler sees it half-moved.
 */

#define GROWTH_SCRATCH_TOPIC "__kafka_mirror_test_bed_partition_growth"

static void move_partition(rd_kafka_mock_partition_t *dst, rd_kafka_mock_partition_t *src,
                           rd_kafka_mock_topic_t *mtopic, int32_t id) {
        memcpy(dst, src, sizeof(*dst));
        TAILQ_MOVE(&dst->msgsets, &src->msgsets, link);
        TAILQ_MOVE(&dst->committed_offsets, &src->committed_offsets, link);
        TAILQ_MOVE(&dst->aborted_txns, &src->aborted_txns, link);
        TAILQ_MOVE(&dst->leader_responses, &src->leader_responses, link);
        TAILQ_MOVE(&dst->errstacks, &src->errstacks, link);
        dst->topic = mtopic;
        dst->id    = id;
}

static int16_t grow_topic(rd_kafka_mock_cluster_t *mcluster, rd_kafka_mock_topic_t *mtopic, int32_t count,
                          char *message) {
        const int32_t old_cnt = mtopic->partition_cnt;
        const int saved_rf    = mcluster->defaults.replication_factor;
        rd_kafka_mock_partition_t *parts;
        rd_kafka_mock_topic_t *scratch;
        rd_kafka_resp_err_t err;
        int32_t i;

        if (rd_kafka_mock_topic_find(mcluster, GROWTH_SCRATCH_TOPIC)) {
                snprintf(message, MESSAGE_MAX, "topic %s is reserved by the test bed", GROWTH_SCRATCH_TOPIC);
                return ERR_INVALID_REQUEST_;
        }
        /* The new partitions get as many replicas as the topic's first. */
        if (old_cnt > 0 && mtopic->partitions[0].replica_cnt > 0)
                mcluster->defaults.replication_factor = mtopic->partitions[0].replica_cnt;
        scratch = rd_kafka_mock_topic_auto_create(mcluster, GROWTH_SCRATCH_TOPIC, count - old_cnt, &err);
        mcluster->defaults.replication_factor = saved_rf;
        if (!scratch || err) {
                snprintf(message, MESSAGE_MAX, "adding partitions failed: %s", rd_kafka_err2str(err));
                return (int16_t)(err ? err : RD_KAFKA_RESP_ERR_UNKNOWN);
        }

        parts = rd_calloc(count, sizeof(*parts));
        for (i = 0; i < old_cnt; i++)
                move_partition(&parts[i], &mtopic->partitions[i], mtopic, i);
        for (i = old_cnt; i < count; i++)
                move_partition(&parts[i], &scratch->partitions[i - old_cnt], mtopic, i);
        rd_free(mtopic->partitions);
        mtopic->partitions    = parts;
        mtopic->partition_cnt = count;

        /* The scratch topic's partitions now belong to mtopic: unlink and free only its shell. */
        TAILQ_REMOVE(&mcluster->topics, scratch, link);
        mcluster->topic_cnt--;
        rd_free(scratch->partitions);
        rd_free(scratch->name);
        rd_free(scratch);
        return 0;
}

struct partition_growth {
        char *topic;
        int32_t count;
        int32_t assignment_cnt; /* -1: none given */
        int unknown_broker;     /* an assignment names a broker the cluster does not have */
};

static int broker_exists(rd_kafka_mock_cluster_t *mcluster, int32_t id) {
        rd_kafka_mock_broker_t *mrkb;
        TAILQ_FOREACH(mrkb, &mcluster->brokers, link) {
                if (mrkb->id == id)
                        return 1;
        }
        return 0;
}

/** Kafka's checks, in its order; then the growth itself unless validate_only. */
static int16_t create_partitions_one(rd_kafka_mock_cluster_t *mcluster, const struct partition_growth *all,
                                     int32_t i, rd_bool_t validate_only, char *message) {
        const struct partition_growth *g = &all[i];
        rd_kafka_mock_topic_t *mtopic;
        int32_t k;

        for (k = 0; k < i; k++) {
                if (all[k].topic && g->topic && !strcmp(all[k].topic, g->topic)) {
                        snprintf(message, MESSAGE_MAX, "Duplicate topic in request.");
                        return ERR_INVALID_REQUEST_;
                }
        }
        if (!g->topic || !(mtopic = rd_kafka_mock_topic_find(mcluster, g->topic))) {
                snprintf(message, MESSAGE_MAX, "The topic '%s' does not exist.", g->topic ? g->topic : "");
                return ERR_UNKNOWN_TOPIC_OR_PART;
        }
        if (g->count == mtopic->partition_cnt) {
                snprintf(message, MESSAGE_MAX, "Topic already has %d partitions.", mtopic->partition_cnt);
                return ERR_INVALID_PARTITIONS_;
        }
        if (g->count < mtopic->partition_cnt) {
                snprintf(message, MESSAGE_MAX,
                         "Topic currently has %d partitions, which is higher than the requested %d.",
                         mtopic->partition_cnt, g->count);
                return ERR_INVALID_PARTITIONS_;
        }
        if (g->assignment_cnt >= 0 && g->assignment_cnt != g->count - mtopic->partition_cnt) {
                snprintf(message, MESSAGE_MAX,
                         "Increasing the number of partitions by %d but %d assignments provided.",
                         g->count - mtopic->partition_cnt, g->assignment_cnt);
                return ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        if (g->unknown_broker) {
                snprintf(message, MESSAGE_MAX, "Unknown broker(s) in replica assignment.");
                return ERR_INVALID_REPLICA_ASSIGNMENT;
        }
        return validate_only ? 0 : grow_topic(mcluster, mtopic, g->count, message);
}

static void growths_free(struct partition_growth *growths, int32_t cnt) {
        int32_t i;
        if (!growths)
                return;
        for (i = 0; i < cnt; i++)
                rd_free(growths[i].topic);
        rd_free(growths);
}

static int handle_create_partitions(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        const rd_bool_t log_decode_errors = rd_true;
        rd_kafka_mock_cluster_t *mcluster = mconn->broker->cluster;
        rd_kafka_buf_t *resp              = rd_kafka_mock_buf_new_response(rkbuf);
        struct partition_growth *growths  = NULL;
        rd_bool_t validate_only           = rd_false;
        rd_kafka_resp_err_t injected;
        int32_t cnt = 0, timeout_ms, i, j, k;

        rd_kafka_buf_read_arraycnt(rkbuf, &cnt, RD_KAFKAP_TOPICS_MAX);
        if (cnt < 0)
                cnt = 0;
        growths = rd_calloc(cnt ? cnt : 1, sizeof(*growths));
        for (i = 0; i < cnt; i++) {
                rd_kafkap_str_t topic;
                int32_t assignment_cnt;
                rd_kafka_buf_read_str(rkbuf, &topic);
                growths[i].topic = str_dup_or_null(&topic);
                rd_kafka_buf_read_i32(rkbuf, &growths[i].count);
                rd_kafka_buf_read_arraycnt(rkbuf, &assignment_cnt, RD_KAFKAP_PARTITIONS_MAX);
                growths[i].assignment_cnt = assignment_cnt;
                for (j = 0; j < assignment_cnt; j++) {
                        int32_t replica_cnt;
                        rd_kafka_buf_read_arraycnt(rkbuf, &replica_cnt, 1000);
                        for (k = 0; k < replica_cnt; k++) {
                                int32_t broker;
                                rd_kafka_buf_read_i32(rkbuf, &broker);
                                if (!broker_exists(mcluster, broker))
                                        growths[i].unknown_broker = 1;
                        }
                        rd_kafka_buf_skip_tags(rkbuf);
                }
                rd_kafka_buf_skip_tags(rkbuf);
        }
        rd_kafka_buf_read_i32(rkbuf, &timeout_ms);
        rd_kafka_buf_read_bool(rkbuf, &validate_only);

        /* Errors pushed for ApiKey 37 apply to every topic of the request. */
        injected = rd_kafka_mock_next_request_error(mconn, resp);
        rd_kafka_buf_write_i32(resp, 0); /* ThrottleTimeMs */
        rd_kafka_buf_write_arraycnt(resp, cnt);
        for (i = 0; i < cnt; i++) {
                char message[MESSAGE_MAX] = "";
                int16_t err               = (int16_t)injected;
                if (!err)
                        err = create_partitions_one(mcluster, growths, i, validate_only, message);
                rd_kafka_buf_write_str(resp, growths[i].topic, -1);
                rd_kafka_buf_write_i16(resp, err);
                rd_kafka_buf_write_str(resp, !err ? NULL : injected ? rd_kafka_err2str(injected) : message, -1);
                rd_kafka_buf_write_tags_empty(resp);
        }
        growths_free(growths, cnt);
        rd_kafka_mock_connection_send_response(mconn, resp);
        return 0;

err_parse:
        growths_free(growths, cnt);
        rd_kafka_buf_destroy(resp);
        return -1;
}
