#!/usr/bin/env bash
# npm test: the type check and lint beside the test-bed build (a compiler against a C build and
# downloads: a minute of CI's 30 saved), then both test lanes (scripts/run-tests.mjs --both).
set -euo pipefail
cd "$(dirname "$0")/.."
npm run --silent setup:testbed &
setup=$!
checks=0
npm run typecheck && npm run lint || checks=1
wait "${setup}" || { echo "test: the test-bed setup failed" >&2; exit 1; }
[ "${checks}" -eq 0 ] || { echo "test: the type check or lint failed" >&2; exit 1; }
exec node scripts/run-tests.mjs --both "$@"
