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
readonly SHASUM="a7ec81c475dc309aa15d047d8d03679c8be49189"
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

# shellcheck source=scripts/testbed/npm-pack-pinned.sh
source scripts/testbed/npm-pack-pinned.sh
tarball="$(npm_pack_pinned "${PACKAGE}" "${VERSION}" "${SHASUM}")" || {
  echo "fetch-dynamodb-local: no verified ${PACKAGE}@${VERSION} tarball" >&2
  exit 1
}

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
