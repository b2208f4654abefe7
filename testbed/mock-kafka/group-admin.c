/*
 * Consumer-group admin requests for the mock cluster, #included by launcher.c, which calls
 * register_group_handlers() once before any client connects. librdkafka 2.15.1's mock has the
 * group protocol (FindCoordinator, JoinGroup/SyncGroup/Heartbeat/LeaveGroup, OffsetCommit,
 * OffsetFetch) but no ListGroups or DescribeGroups; these answer them as Kafka's classic group
 * coordinator does, from the mock's own group state (mcluster->cgrps_classic) and committed
 * offsets (per partition, mpart->committed_offsets). They run on the mock cluster's thread, as
 * every handler does, so they read that state without locks.
 *
 *   ListGroups v0-v5 (v3+ flexible, v4+ states filter and GroupState, v5+ types filter and
 *     GroupType): each broker lists the groups it coordinates, as Kafka does, so a client asks
 *     every broker. A group that exists only through committed offsets (an admin commit, never a
 *     member) is listed as Empty with protocol type "", as Kafka lists it.
 *   DescribeGroups v0-v5 (v3+ authorized operations, v4+ group instance id, v5+ flexible): state,
 *     protocol type, protocol and members (member id, group instance id, client id, client host
 *     "/a.b.c.d", metadata of the chosen protocol and assignment while Stable; no metadata and
 *     assignment otherwise, as Kafka). An unknown group is "Dead" with no error, as Kafka answers;
 *     a group this broker does not coordinate is NOT_COORDINATOR.
 *   OffsetFetch v2+ with a null topic list (every partition the group committed, what Kafka
 *     answers and kafkajs/Kafka's admin client ask): the mock answered nothing; other requests go
 *     to the mock's own handler.
 * The mock keeps neither a member's client id and host nor its assignment after SyncGroup, so
 * wrappers around JoinGroup and SyncGroup note them (member_notes below) before the mock's own
 * handlers run.
 *
 * State names: the mock's Empty, Joining, Syncing, Rebalancing, Up are Kafka's Empty,
 * PreparingRebalance, CompletingRebalance, PreparingRebalance (a sync timed out, members must
 * rejoin), Stable. The mock never deletes a group, so nothing is Dead but unknown ids.
 * Errors pushed for these API keys (push-errors 15|16 CODE) answer the whole request.
 */

#define GROUP_TYPE_CLASSIC "classic"
/* Kafka's answer when authorized operations were not asked for (Integer.MIN_VALUE). */
#define AUTHORIZED_OPERATIONS_OMITTED INT32_MIN

static int (*mock_join_group)(rd_kafka_mock_connection_t *, rd_kafka_buf_t *);
static int (*mock_sync_group)(rd_kafka_mock_connection_t *, rd_kafka_buf_t *);
static int (*mock_offset_fetch)(rd_kafka_mock_connection_t *, rd_kafka_buf_t *);

static const char *kafka_group_state(const rd_kafka_mock_cgrp_classic_t *mcgrp) {
        switch (mcgrp->state) {
        case RD_KAFKA_MOCK_CGRP_STATE_EMPTY:
                return "Empty";
        case RD_KAFKA_MOCK_CGRP_STATE_JOINING:
        case RD_KAFKA_MOCK_CGRP_STATE_REBALANCING:
                return "PreparingRebalance";
        case RD_KAFKA_MOCK_CGRP_STATE_SYNCING:
                return "CompletingRebalance";
        case RD_KAFKA_MOCK_CGRP_STATE_UP:
                return "Stable";
        }
        return "Unknown";
}

static rd_kafkap_str_t kstr_of(const char *s) {
        rd_kafkap_str_t k = {(int)strlen(s), s};
        return k;
}

static rd_bool_t coordinated_here(rd_kafka_mock_connection_t *mconn, const char *group) {
        rd_kafkap_str_t key = kstr_of(group);
        return rd_kafka_mock_cluster_get_coord(mconn->broker->cluster, RD_KAFKA_COORD_GROUP, &key) ==
               mconn->broker;
}

static rd_kafka_mock_cgrp_classic_t *classic_group(rd_kafka_mock_cluster_t *mcluster, const char *group) {
        rd_kafkap_str_t key = kstr_of(group);
        return rd_kafka_mock_cgrp_classic_find(mcluster, &key);
}

/* ---- Groups that exist only through committed offsets ------------------------------------ */

/** Calls `found` once per distinct group with a committed offset and no classic group object. */
static void for_each_offset_only_group(rd_kafka_mock_cluster_t *mcluster,
                                       void (*found)(const char *group, void *opaque), void *opaque) {
        rd_list_t seen;
        rd_kafka_mock_topic_t *mtopic;
        rd_list_init(&seen, 16, NULL);
        TAILQ_FOREACH(mtopic, &mcluster->topics, link) {
                int i;
                for (i = 0; i < mtopic->partition_cnt; i++) {
                        const rd_kafka_mock_committed_offset_t *coff;
                        TAILQ_FOREACH(coff, &mtopic->partitions[i].committed_offsets, link) {
                                if (rd_list_find(&seen, coff->group, (int (*)(const void *, const void *))strcmp) ||
                                    classic_group(mcluster, coff->group))
                                        continue;
                                rd_list_add(&seen, coff->group);
                                found(coff->group, opaque);
                        }
                }
        }
        rd_list_destroy(&seen);
}

static rd_bool_t has_committed_offsets(rd_kafka_mock_cluster_t *mcluster, const char *group) {
        rd_kafka_mock_topic_t *mtopic;
        rd_kafkap_str_t key = kstr_of(group);
        TAILQ_FOREACH(mtopic, &mcluster->topics, link) {
                int i;
                for (i = 0; i < mtopic->partition_cnt; i++)
                        if (rd_kafka_mock_committed_offset_find(&mtopic->partitions[i], &key))
                                return rd_true;
        }
        return rd_false;
}

/* ---- What the mock forgets about members: client id, host, assignment ---------------------- */

struct member_note {
        struct member_note *next;
        char *group;
        char *member;
        char *client_id;
        char *client_host;
        int32_t assignment_generation; /* -1: no assignment noted */
        rd_kafkap_bytes_t *assignment;
};
static struct member_note *member_notes;

static void member_note_free(struct member_note *note) {
        rd_free(note->group);
        rd_free(note->member);
        rd_free(note->client_id);
        rd_free(note->client_host);
        if (note->assignment)
                rd_kafkap_bytes_destroy(note->assignment);
        rd_free(note);
}

static rd_kafka_mock_cgrp_classic_member_t *find_member(rd_kafka_mock_cgrp_classic_t *mcgrp,
                                                        const char *member) {
        rd_kafkap_str_t key = kstr_of(member);
        return mcgrp ? rd_kafka_mock_cgrp_classic_member_find(mcgrp, &key) : NULL;
}

/** Drops the notes of members that are gone (left, timed out). */
static void member_notes_prune(rd_kafka_mock_cluster_t *mcluster) {
        struct member_note **at = &member_notes;
        while (*at) {
                struct member_note *note = *at;
                if (find_member(classic_group(mcluster, note->group), note->member)) {
                        at = &note->next;
                } else {
                        *at = note->next;
                        member_note_free(note);
                }
        }
}

static struct member_note *member_note(const char *group, const char *member, rd_bool_t create) {
        struct member_note *note;
        for (note = member_notes; note; note = note->next)
                if (!strcmp(note->group, group) && !strcmp(note->member, member))
                        return note;
        if (!create)
                return NULL;
        note                        = rd_calloc(1, sizeof(*note));
        note->group                 = rd_strdup(group);
        note->member                = rd_strdup(member);
        note->client_id             = rd_strdup("");
        note->client_host           = rd_strdup("");
        note->assignment_generation = -1;
        note->next                  = member_notes;
        member_notes                = note;
        return note;
}

/** The request header's client id: the mock's reader starts past it, the buffer still has it. */
static char *request_client_id(rd_kafka_buf_t *rkbuf) {
        rd_slice_t slice;
        int16_t len;
        char *id;
        if (rd_slice_init(&slice, &rkbuf->rkbuf_buf, RD_KAFKAP_REQHDR_SIZE,
                          rd_buf_len(&rkbuf->rkbuf_buf) - RD_KAFKAP_REQHDR_SIZE) == -1 ||
            rd_slice_read(&slice, &len, sizeof(len)) != sizeof(len))
                return rd_strdup("");
        len = (int16_t)be16toh(len);
        if (len <= 0)
                return rd_strdup("");
        id = rd_malloc((size_t)len + 1);
        if (rd_slice_read(&slice, id, (size_t)len) != (size_t)len) {
                rd_free(id);
                return rd_strdup("");
        }
        id[len] = '\0';
        return id;
}

/** Reads the group id (the first field of JoinGroup and SyncGroup) and rewinds the reader. */
static char *peek_group_id(rd_kafka_buf_t *rkbuf) {
        const rd_bool_t log_decode_errors = rd_false;
        const size_t start                = rd_slice_offset(&rkbuf->rkbuf_reader);
        rd_kafkap_str_t group;
        rd_kafka_buf_read_str(rkbuf, &group);
        rd_slice_seek(&rkbuf->rkbuf_reader, start);
        return RD_KAFKAP_STR_DUP(&group);
err_parse:
        rd_slice_seek(&rkbuf->rkbuf_reader, start);
        return NULL;
}

/**
 * The mock's JoinGroup, then notes client id and host of the member this connection is joining
 * as: member_add() leaves it holding the connection and its pending response.
 */
static int handle_join_group_noting(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        rd_kafka_mock_cluster_t *mcluster = mconn->broker->cluster;
        char *group                       = peek_group_id(rkbuf);
        char *client_id                   = request_client_id(rkbuf);
        int r                             = mock_join_group(mconn, rkbuf);
        rd_kafka_mock_cgrp_classic_t *mcgrp;
        rd_kafka_mock_cgrp_classic_member_t *member;

        if (r == 0 && group && (mcgrp = classic_group(mcluster, group))) {
                TAILQ_FOREACH(member, &mcgrp->members, link) {
                        struct member_note *note;
                        char host[INET_ADDRSTRLEN + 1] = "/";
                        if (member->conn != mconn || !member->resp)
                                continue;
                        note = member_note(group, member->id, rd_true);
                        inet_ntop(AF_INET, &mconn->peer.sin_addr, host + 1, sizeof(host) - 1);
                        rd_free(note->client_id);
                        rd_free(note->client_host);
                        note->client_id   = rd_strdup(client_id);
                        note->client_host = rd_strdup(host);
                }
        }
        member_notes_prune(mcluster);
        rd_free(client_id);
        if (group)
                rd_free(group);
        return r;
}

/** Notes the assignments a leader's SyncGroup hands out (v0-v4), then runs the mock's SyncGroup. */
static int handle_sync_group_noting(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        const rd_bool_t log_decode_errors = rd_false;
        const int16_t version             = rkbuf->rkbuf_reqhdr.ApiVersion;
        const size_t start                = rd_slice_offset(&rkbuf->rkbuf_reader);
        rd_kafkap_str_t group, member, instance;
        int32_t generation, count, i;
        char *group_id = NULL;

        rd_kafka_buf_read_str(rkbuf, &group);
        rd_kafka_buf_read_i32(rkbuf, &generation);
        rd_kafka_buf_read_str(rkbuf, &member);
        if (version >= 3)
                rd_kafka_buf_read_str(rkbuf, &instance);
        rd_kafka_buf_read_arraycnt(rkbuf, &count, 100000);
        group_id = RD_KAFKAP_STR_DUP(&group);
        for (i = 0; i < count; i++) {
                rd_kafkap_str_t assigned;
                rd_kafkap_bytes_t assignment;
                struct member_note *note;
                char *assigned_id;
                rd_kafka_buf_read_str(rkbuf, &assigned);
                rd_kafka_buf_read_kbytes(rkbuf, &assignment);
                rd_kafka_buf_skip_tags(rkbuf);
                assigned_id = RD_KAFKAP_STR_DUP(&assigned);
                note        = member_note(group_id, assigned_id, rd_true);
                rd_free(assigned_id);
                if (note->assignment)
                        rd_kafkap_bytes_destroy(note->assignment);
                note->assignment            = rd_kafkap_bytes_copy(&assignment);
                note->assignment_generation = generation;
        }
err_parse:
        if (group_id)
                rd_free(group_id);
        rd_slice_seek(&rkbuf->rkbuf_reader, start);
        return mock_sync_group(mconn, rkbuf);
}

/* ---- ListGroups ------------------------------------------------------------------------------ */

struct listing {
        rd_kafka_buf_t *resp;
        rd_kafka_mock_connection_t *mconn;
        char **states;
        int32_t state_cnt;
        char **types;
        int32_t type_cnt;
        size_t count;
};

static rd_bool_t filter_allows(char **filter, int32_t cnt, const char *value) {
        int32_t i;
        if (cnt <= 0)
                return rd_true;
        for (i = 0; i < cnt; i++)
                if (!rd_strcasecmp(filter[i], value))
                        return rd_true;
        return rd_false;
}

static void list_one(struct listing *l, const char *group, const char *protocol_type, const char *state) {
        const int16_t version = l->resp->rkbuf_reqhdr.ApiVersion;
        if (!coordinated_here(l->mconn, group) || !filter_allows(l->states, l->state_cnt, state) ||
            !filter_allows(l->types, l->type_cnt, GROUP_TYPE_CLASSIC))
                return;
        rd_kafka_buf_write_str(l->resp, group, -1);
        rd_kafka_buf_write_str(l->resp, protocol_type, -1);
        if (version >= 4)
                rd_kafka_buf_write_str(l->resp, state, -1);
        if (version >= 5)
                rd_kafka_buf_write_str(l->resp, GROUP_TYPE_CLASSIC, -1);
        rd_kafka_buf_write_tags_empty(l->resp);
        l->count++;
}

static void list_offset_only(const char *group, void *opaque) {
        list_one(opaque, group, "", "Empty");
}

/** Reads a (compact) array of strings, each duplicated. */
static int read_str_array(rd_kafka_buf_t *rkbuf, char ***out, int32_t *cnt) {
        const rd_bool_t log_decode_errors = rd_true;
        int32_t i;
        rd_kafka_buf_read_arraycnt(rkbuf, cnt, 1000);
        *out = rd_calloc(*cnt > 0 ? *cnt : 1, sizeof(**out));
        for (i = 0; i < *cnt; i++) {
                rd_kafkap_str_t s;
                rd_kafka_buf_read_str(rkbuf, &s);
                (*out)[i] = RD_KAFKAP_STR_DUP(&s);
        }
        return 0;
err_parse:
        return -1;
}

static void free_str_array(char **a, int32_t cnt) {
        int32_t i;
        for (i = 0; a && i < cnt; i++)
                rd_free(a[i]);
        if (a)
                rd_free(a);
}

static int handle_list_groups(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        rd_kafka_mock_cluster_t *mcluster = mconn->broker->cluster;
        const int16_t version             = rkbuf->rkbuf_reqhdr.ApiVersion;
        struct listing l                  = {rd_kafka_mock_buf_new_response(rkbuf), mconn};
        rd_kafka_mock_cgrp_classic_t *mcgrp;
        rd_kafka_resp_err_t err;
        size_t of_count;
        int ok = 0;

        if (version >= 4)
                ok |= read_str_array(rkbuf, &l.states, &l.state_cnt);
        if (version >= 5)
                ok |= read_str_array(rkbuf, &l.types, &l.type_cnt);
        if (ok) {
                free_str_array(l.states, l.state_cnt);
                free_str_array(l.types, l.type_cnt);
                rd_kafka_buf_destroy(l.resp);
                return -1;
        }

        if (version >= 1)
                rd_kafka_buf_write_i32(l.resp, 0); /* ThrottleTimeMs */
        err = rd_kafka_mock_next_request_error(mconn, l.resp);
        rd_kafka_buf_write_i16(l.resp, err);
        of_count = rd_kafka_buf_write_arraycnt_pos(l.resp);
        if (!err) {
                TAILQ_FOREACH(mcgrp, &mcluster->cgrps_classic, link)
                list_one(&l, mcgrp->id, mcgrp->protocol_type ? mcgrp->protocol_type : "",
                         kafka_group_state(mcgrp));
                for_each_offset_only_group(mcluster, list_offset_only, &l);
        }
        rd_kafka_buf_finalize_arraycnt(l.resp, of_count, l.count);

        free_str_array(l.states, l.state_cnt);
        free_str_array(l.types, l.type_cnt);
        rd_kafka_mock_connection_send_response(mconn, l.resp);
        return 0;
}

/* ---- DescribeGroups -------------------------------------------------------------------------- */

static const rd_kafkap_bytes_t *chosen_metadata(const rd_kafka_mock_cgrp_classic_t *mcgrp,
                                                const rd_kafka_mock_cgrp_classic_member_t *member) {
        int i;
        for (i = 0; mcgrp->protocol_name && i < member->proto_cnt; i++)
                if (!rd_kafkap_str_cmp_str(member->protos[i].name, mcgrp->protocol_name))
                        return member->protos[i].metadata;
        return NULL;
}

static void describe_members(rd_kafka_buf_t *resp, const rd_kafka_mock_cgrp_classic_t *mcgrp) {
        const int16_t version = resp->rkbuf_reqhdr.ApiVersion;
        const rd_bool_t stable = mcgrp->state == RD_KAFKA_MOCK_CGRP_STATE_UP;
        static const rd_kafkap_bytes_t no_bytes = {0, "", {0}};
        const rd_kafka_mock_cgrp_classic_member_t *member;

        rd_kafka_buf_write_arraycnt(resp, (size_t)mcgrp->member_cnt);
        TAILQ_FOREACH(member, &mcgrp->members, link) {
                const struct member_note *note = member_note(mcgrp->id, member->id, rd_false);
                const rd_kafkap_bytes_t *metadata = stable ? chosen_metadata(mcgrp, member) : NULL;
                const rd_kafkap_bytes_t *assignment =
                    stable && note && note->assignment && note->assignment_generation == mcgrp->generation_id
                        ? note->assignment
                        : NULL;
                rd_kafka_buf_write_str(resp, member->id, -1);
                if (version >= 4)
                        rd_kafka_buf_write_str(resp, member->group_instance_id, -1);
                rd_kafka_buf_write_str(resp, note ? note->client_id : "", -1);
                rd_kafka_buf_write_str(resp, note ? note->client_host : "", -1);
                rd_kafka_buf_write_kbytes(resp, metadata ? metadata : &no_bytes);
                rd_kafka_buf_write_kbytes(resp, assignment ? assignment : &no_bytes);
                rd_kafka_buf_write_tags_empty(resp);
        }
}

static void describe_one(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *resp, const char *group,
                         rd_kafka_resp_err_t err) {
        rd_kafka_mock_cluster_t *mcluster = mconn->broker->cluster;
        const int16_t version             = resp->rkbuf_reqhdr.ApiVersion;
        rd_kafka_mock_cgrp_classic_t *mcgrp = NULL;
        const char *state = "Dead", *protocol_type = "", *protocol = "";

        if (!err && !coordinated_here(mconn, group))
                err = RD_KAFKA_RESP_ERR_NOT_COORDINATOR;
        if (!err && (mcgrp = classic_group(mcluster, group))) {
                state         = kafka_group_state(mcgrp);
                protocol_type = mcgrp->protocol_type ? mcgrp->protocol_type : "";
                /* Kafka names the protocol only while Stable. */
                if (mcgrp->state == RD_KAFKA_MOCK_CGRP_STATE_UP && mcgrp->protocol_name)
                        protocol = mcgrp->protocol_name;
        } else if (!err && has_committed_offsets(mcluster, group)) {
                state = "Empty";
        } else if (err) {
                state = "";
        }

        rd_kafka_buf_write_i16(resp, err);
        rd_kafka_buf_write_str(resp, group, -1);
        rd_kafka_buf_write_str(resp, state, -1);
        rd_kafka_buf_write_str(resp, protocol_type, -1);
        rd_kafka_buf_write_str(resp, protocol, -1);
        if (mcgrp)
                describe_members(resp, mcgrp);
        else
                rd_kafka_buf_write_arraycnt(resp, 0);
        if (version >= 3)
                rd_kafka_buf_write_i32(resp, AUTHORIZED_OPERATIONS_OMITTED);
        rd_kafka_buf_write_tags_empty(resp);
}

static int handle_describe_groups(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        const rd_bool_t log_decode_errors = rd_true;
        const int16_t version             = rkbuf->rkbuf_reqhdr.ApiVersion;
        rd_kafka_buf_t *resp              = rd_kafka_mock_buf_new_response(rkbuf);
        char **groups                     = NULL;
        int32_t group_cnt = 0, i;
        rd_bool_t include_operations = rd_false;
        rd_kafka_resp_err_t err;

        if (read_str_array(rkbuf, &groups, &group_cnt))
                goto err_parse;
        if (version >= 3)
                rd_kafka_buf_read_bool(rkbuf, &include_operations);

        if (version >= 1)
                rd_kafka_buf_write_i32(resp, 0); /* ThrottleTimeMs */
        err = rd_kafka_mock_next_request_error(mconn, resp);
        rd_kafka_buf_write_arraycnt(resp, (size_t)(group_cnt > 0 ? group_cnt : 0));
        for (i = 0; i < group_cnt; i++)
                describe_one(mconn, resp, groups[i], err);

        free_str_array(groups, group_cnt);
        rd_kafka_mock_connection_send_response(mconn, resp);
        return 0;

err_parse:
        free_str_array(groups, group_cnt);
        rd_kafka_buf_destroy(resp);
        return -1;
}

/* ---- OffsetFetch of every committed partition -------------------------------------------------- */

/** The group's committed partitions of one topic; returns how many were written. */
static size_t write_committed_partitions(rd_kafka_buf_t *resp, rd_kafka_mock_topic_t *mtopic,
                                         const rd_kafkap_str_t *group) {
        const int16_t version = resp->rkbuf_reqhdr.ApiVersion;
        size_t of_count, count = 0;
        int i;
        rd_kafka_buf_write_str(resp, mtopic->name, -1);
        of_count = rd_kafka_buf_write_arraycnt_pos(resp);
        for (i = 0; i < mtopic->partition_cnt; i++) {
                rd_kafka_mock_partition_t *mpart = &mtopic->partitions[i];
                const rd_kafka_mock_committed_offset_t *coff = rd_kafka_mock_committed_offset_find(mpart, group);
                if (!coff)
                        continue;
                rd_kafka_buf_write_i32(resp, mpart->id);
                rd_kafka_buf_write_i64(resp, coff->offset);
                if (version >= 5)
                        rd_kafka_buf_write_i32(resp, mpart->leader_epoch); /* as the mock's own handler */
                rd_kafka_buf_write_kstr(resp, coff->metadata);
                rd_kafka_buf_write_i16(resp, RD_KAFKA_RESP_ERR_NO_ERROR);
                rd_kafka_buf_write_tags_empty(resp);
                count++;
        }
        rd_kafka_buf_finalize_arraycnt(resp, of_count, count);
        rd_kafka_buf_write_tags_empty(resp);
        return count;
}

static int handle_offset_fetch_all(rd_kafka_mock_connection_t *mconn, rd_kafka_buf_t *rkbuf) {
        const rd_bool_t log_decode_errors = rd_true;
        rd_kafka_mock_cluster_t *mcluster = mconn->broker->cluster;
        const int16_t version             = rkbuf->rkbuf_reqhdr.ApiVersion;
        const size_t start                = rd_slice_offset(&rkbuf->rkbuf_reader);
        rd_kafkap_str_t group;
        int32_t topic_cnt;
        rd_kafka_buf_t *resp;
        rd_kafka_resp_err_t err;
        rd_kafka_mock_topic_t *mtopic;
        size_t of_topics, topics = 0;

        if (version < 2)
                return mock_offset_fetch(mconn, rkbuf);
        rd_kafka_buf_read_str(rkbuf, &group);
        rd_kafka_buf_read_arraycnt(rkbuf, &topic_cnt, 100000);
        if (topic_cnt != -1) {
                rd_slice_seek(&rkbuf->rkbuf_reader, start);
                return mock_offset_fetch(mconn, rkbuf);
        }

        resp = rd_kafka_mock_buf_new_response(rkbuf);
        if (version >= 3)
                rd_kafka_buf_write_i32(resp, 0); /* ThrottleTimeMs */
        err = rd_kafka_mock_next_request_error(mconn, resp);
        if (!err && !rd_kafka_mock_cluster_get_coord(mcluster, RD_KAFKA_COORD_GROUP, &group))
                err = RD_KAFKA_RESP_ERR_NOT_COORDINATOR;
        of_topics = rd_kafka_buf_write_arraycnt_pos(resp);
        TAILQ_FOREACH(mtopic, &mcluster->topics, link) {
                /* A topic is written, then taken back when the group has nothing in it. */
                size_t before = rd_buf_write_pos(&resp->rkbuf_buf);
                if (err)
                        break;
                if (write_committed_partitions(resp, mtopic, &group) > 0)
                        topics++;
                else
                        rd_buf_write_seek(&resp->rkbuf_buf, before);
        }
        rd_kafka_buf_finalize_arraycnt(resp, of_topics, topics);
        rd_kafka_buf_write_i16(resp, err);
        rd_kafka_mock_connection_send_response(mconn, resp);
        return 0;

err_parse:
        return -1;
}

static void register_group_handlers(rd_kafka_mock_cluster_t *mcluster) {
        mock_join_group   = mcluster->api_handlers[RD_KAFKAP_JoinGroup].cb;
        mock_sync_group   = mcluster->api_handlers[RD_KAFKAP_SyncGroup].cb;
        mock_offset_fetch = mcluster->api_handlers[RD_KAFKAP_OffsetFetch].cb;
        mcluster->api_handlers[RD_KAFKAP_JoinGroup].cb   = handle_join_group_noting;
        mcluster->api_handlers[RD_KAFKAP_SyncGroup].cb   = handle_sync_group_noting;
        mcluster->api_handlers[RD_KAFKAP_OffsetFetch].cb = handle_offset_fetch_all;
        mcluster->api_handlers[RD_KAFKAP_ListGroups] =
            (struct rd_kafka_mock_api_handler) {0, 5, 3, handle_list_groups};
        mcluster->api_handlers[RD_KAFKAP_DescribeGroups] =
            (struct rd_kafka_mock_api_handler) {0, 5, 5, handle_describe_groups};
}
