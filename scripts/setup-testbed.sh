#!/usr/bin/env bash
# Builds everything the tests and the demo need into .testbed/ (ignored by git): librdkafka's
# mock Kafka cluster behind our launcher, DynamoDB Local, a real Apache Kafka's jars, and the
# Node release the functions run on (the bench's worker runs on it). Each
# step skips itself when its output is already there, so running this before every test run is
# cheap.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages: a C toolchain and zlib headers for the mock broker, kcat as an independent
# (non-kafkajs) client, a JRE for DynamoDB Local and Apache Kafka, Maven to fetch Kafka's jars,
# stunnel and openssl for the TLS tests. Installed here rather than only in CI so that
# the README's Quickstart works on a fresh machine too.
missing=()
command -v gcc >/dev/null || missing+=(gcc)
command -v make >/dev/null || missing+=(make)
command -v kcat >/dev/null || missing+=(kcat)
command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || missing+=(maven) # fetches Apache Kafka's jars from Maven Central
command -v setpriv >/dev/null || missing+=(util-linux) # ties each test broker's JVM to its test process
command -v stunnel4 >/dev/null || missing+=(stunnel4) # TLS terminator for test/integration/kafka/tls.test.ts
command -v openssl >/dev/null || missing+=(openssl)   # test certificates for the same
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup-testbed: installing ${missing[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup-testbed: missing system packages: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# Each step's time, so the README's first-setup numbers can be checked against a real run.
step() {
  local started=$SECONDS
  bash "scripts/testbed/$1.sh"
  echo "setup-testbed: $1: $((SECONDS - started)) s" >&2
}
# Side by side: the mock's build is a C compile, the others mostly downloads (a first setup
# on a clean clone: 81 s + 4 s + 33 s + 3 s one after the other). Their outputs do not overlap.
pids=()
for name in build-mock-kafka fetch-dynamodb-local fetch-kafka fetch-functions-node; do
  step "${name}" &
  pids+=("$!")
done
failed=0
for pid in "${pids[@]}"; do wait "${pid}" || failed=1; done
if [ "${failed}" -ne 0 ]; then
  echo "setup-testbed: a step failed (its lines above say which)" >&2
  exit 1
fi
echo "setup-testbed: done in ${SECONDS} s" >&2
