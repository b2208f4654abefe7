#!/usr/bin/env bash
# Puts a real Apache Kafka's jars into .testbed/kafka/ for test/helpers/real-kafka.ts:
#   libs/       the broker (java -cp '.testbed/kafka/libs/*' kafka.Kafka ...)
#   mm2-libs/   MirrorMaker 2 (connect-mirror + connect-runtime of the same release)
# The versions are pinned in testbed/kafka/pom.xml; Maven fetches them from Maven Central into a
# local repository inside .testbed/ (.testbed/m2), so nothing outside the checkout is read or
# written, and tests never fetch anything.
#
# Idempotent: a stamp holds the pom's sha256, so an unchanged pom skips everything and a changed
# one (another Kafka release) fetches again.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly POM="testbed/kafka/pom.xml"
readonly DEST=".testbed/kafka"
readonly STAMP="${DEST}/pom.sha256"

for tool in java mvn; do
  if ! command -v "${tool}" >/dev/null 2>&1; then
    echo "fetch-kafka: '${tool}' not found; install it with: apt-get install -y maven openjdk-17-jre-headless" >&2
    exit 1
  fi
done

hash="$(sha256sum "${POM}" | cut -d' ' -f1)"
if [[ -f "${STAMP}" && "$(cat "${STAMP}")" == "${hash}" && -d "${DEST}/libs" && -d "${DEST}/mm2-libs" ]]; then
  echo "fetch-kafka: ${DEST} matches ${POM}, skipping"
  exit 0
fi

# Copy into a staging folder and swap it in at the end: an interrupted run never leaves a
# half-filled libs/ that a stamp (or a test) would take for complete.
mkdir -p .testbed
staging="$(mktemp -d "${DEST}.tmp.XXXXXX")"
trap 'rm -rf "${staging}"' EXIT
readonly LOG=".testbed/fetch-kafka.log"
copy() {
  local out="$1"
  shift
  # Maven's output goes to a log shown only on failure: even -B -q prints colour resets here.
  # The repository path must be absolute: Maven resolves a relative one against the pom's
  # folder, not the current directory.
  if ! mvn -B -q -f "${POM}" "$@" "-Dmaven.repo.local=${PWD}/.testbed/m2" \
    dependency:copy-dependencies -DincludeScope=runtime "-DoutputDirectory=${PWD}/${out}" >"${LOG}" 2>&1; then
    cat "${LOG}" >&2
    echo "fetch-kafka: mvn failed (log in ${LOG})" >&2
    exit 1
  fi
}
echo "fetch-kafka: fetching the jars named in ${POM} (first run: about a minute and a half)"
copy "${staging}/libs"
copy "${staging}/mm2-libs" -Pmm2

version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "${POM}")"
for jar in "libs/kafka_2.13-${version}.jar" libs/log4j-slf4j-impl-*.jar "mm2-libs/connect-mirror-${version}.jar"; do
  if ! compgen -G "${staging}/${jar}" >/dev/null; then
    echo "fetch-kafka: ${jar} missing after the copy" >&2
    exit 1
  fi
done

chmod 755 "${staging}"
echo "${hash}" >"${staging}/pom.sha256"
rm -rf "${DEST}"
mv "${staging}" "${DEST}"
trap - EXIT
echo "fetch-kafka: Apache Kafka ${version} ready in ${DEST} ($(du -sh "${DEST}" | cut -f1))"
