#!/usr/bin/env bash
# Builds librdkafka 2.15.1's mock Kafka cluster behind our launcher into .testbed/bin/mock-kafka.
# librdkafka's source comes from the @confluentinc/kafka-javascript@1.10.1 npm tarball (the only
# registry we can reach that ships it); we use only package/deps/librdkafka and never install it.
# Idempotent: a stamp holding hashes of the patches and of the launcher source decides what
# to redo, so editing the launcher recompiles only the launcher (a few seconds).
set -euo pipefail
readonly SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$SELF")/../.."

readonly RDKAFKA_VERSION="2.15.1"
readonly NPM_PACKAGE="@confluentinc/kafka-javascript@1.10.1"
readonly TARBALL_NAME="confluentinc-kafka-javascript-1.10.1.tgz"

readonly ROOT="$PWD"
readonly TESTBED="${ROOT}/.testbed"
readonly DOWNLOADS="${TESTBED}/downloads"
readonly SRC_DIR="${TESTBED}/librdkafka-${RDKAFKA_VERSION}"
readonly BIN_DIR="${TESTBED}/bin"
readonly LAUNCHER_SRC="${ROOT}/testbed/mock-kafka/launcher.c"
readonly PATCH_SCRIPT="${ROOT}/testbed/mock-kafka/patch-retention.pl"
readonly IDEMPOTENCE_PATCH="${ROOT}/testbed/mock-kafka/patch-idempotence.pl"
readonly LIB_STAMP="${SRC_DIR}/.kafka-mirror-lib.stamp"
readonly BIN_STAMP="${BIN_DIR}/.mock-kafka.stamp"
# Outside the source tree: its configure script treats any configure.* file there as a module.
readonly BUILD_LOG="${TESTBED}/librdkafka-build.log"

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

  log "patching per-partition retention"
  perl "$PATCH_SCRIPT" "${SRC_DIR}/src/rdkafka_mock.c" || die "retention patch failed"
  grep -q MOCK_KAFKA_PARTITION_MAX_BYTES "${SRC_DIR}/src/rdkafka_mock.c" || die "retention patch not applied"
  log "patching sequence checks for idempotent producers"
  perl "$IDEMPOTENCE_PATCH" "${SRC_DIR}/src/rdkafka_mock.c" || die "idempotence patch failed"
  grep -q "idempotent_only" "${SRC_DIR}/src/rdkafka_mock.c" || die "idempotence patch not applied"

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

check_prerequisites
[[ -f "$LAUNCHER_SRC" ]] || die "missing ${LAUNCHER_SRC}"
[[ -f "$PATCH_SCRIPT" ]] || die "missing ${PATCH_SCRIPT}"
[[ -f "$IDEMPOTENCE_PATCH" ]] || die "missing ${IDEMPOTENCE_PATCH}"
lib_hash="${RDKAFKA_VERSION}-$(hash_of "$PATCH_SCRIPT" "$IDEMPOTENCE_PATCH")"
build_library "$lib_hash"
# The script itself is in the launcher hash because it holds the compiler flags.
build_launcher "${lib_hash}-$(hash_of "$LAUNCHER_SRC" "$SELF")"
