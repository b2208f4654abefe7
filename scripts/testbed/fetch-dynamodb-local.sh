#!/usr/bin/env bash
# Puts AWS's DynamoDB Local emulator (DynamoDBLocal.jar + DynamoDBLocal_lib) into
# .testbed/dynamodb-local/ for the integration tests.
#
# The emulator is only published as a download from AWS, which this CI cannot reach; the same
# build (1.25.1) ships inside the npm tarball amplify-dynamodb-simulator, so we `npm pack` it and
# keep only package/emulator. We never install that package (it pulls ~280 dependencies) and
# never commit the emulator: its licence forbids redistribution, and .testbed/ is git-ignored.
#
# Idempotent: does nothing when the jar is already in place.
set -euo pipefail
cd "$(dirname "$0")/../.."

readonly PACKAGE="amplify-dynamodb-simulator"
readonly VERSION="2.9.30"
# `npm view amplify-dynamodb-simulator@2.9.30 dist.shasum`: a re-published or truncated tarball
# must not silently become the emulator every test trusts.
readonly SHASUM="a7ec81c475dc309aa15d047d8d03679c8be49189"
readonly TARBALL_NAME="${PACKAGE}-${VERSION}.tgz"
readonly DOWNLOADS=".testbed/downloads"
readonly DEST=".testbed/dynamodb-local"

if ! command -v java >/dev/null 2>&1; then
  echo "fetch-dynamodb-local: 'java' not found. DynamoDB Local needs a Java 17+ runtime;" >&2
  echo "  install it with: apt-get install -y openjdk-17-jre-headless" >&2
  exit 1
fi

if [[ -f "${DEST}/DynamoDBLocal.jar" && -d "${DEST}/DynamoDBLocal_lib" ]]; then
  echo "fetch-dynamodb-local: ${DEST} already present, skipping"
  exit 0
fi

mkdir -p "${DOWNLOADS}"
tarball="${DOWNLOADS}/${TARBALL_NAME}"

verify() {
  [[ -f "$1" ]] && [[ "$(sha1sum "$1" | cut -d' ' -f1)" == "${SHASUM}" ]]
}

if ! verify "${tarball}"; then
  rm -f "${tarball}"
  echo "fetch-dynamodb-local: npm pack ${PACKAGE}@${VERSION}"
  npm pack "${PACKAGE}@${VERSION}" --pack-destination "${DOWNLOADS}" --silent >/dev/null
fi
if ! verify "${tarball}"; then
  echo "fetch-dynamodb-local: ${tarball} does not match the pinned sha1 ${SHASUM}" >&2
  exit 1
fi

# Unpack next to the destination and rename at the end, so an interrupted run never leaves a
# half-extracted emulator that the "already present" check above would accept.
staging="$(mktemp -d "${DEST}.tmp.XXXXXX")"
chmod 755 "${staging}"
trap 'rm -rf "${staging}"' EXIT
tar -xzf "${tarball}" -C "${staging}" --strip-components=2 package/emulator
if [[ ! -f "${staging}/DynamoDBLocal.jar" ]]; then
  echo "fetch-dynamodb-local: ${tarball} has no package/emulator/DynamoDBLocal.jar" >&2
  exit 1
fi
rm -rf "${DEST}"
mv "${staging}" "${DEST}"
trap - EXIT
echo "fetch-dynamodb-local: DynamoDB Local ready in ${DEST}"
