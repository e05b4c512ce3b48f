#!/usr/bin/env bash
# Fetches a protoc that still has the JavaScript generator (--js_out, google-protobuf code): protoc
# 3.20 and later moved it out, and its standalone plugin downloads from GitHub at install. Debian
# bullseye's protobuf-compiler 3.12.4 has it built in. The .debs are unpacked into a directory (no
# system package is touched) and a wrapper is written; its path is printed for PROTOC_JS.
# Usage: PROTOC_JS="$(bash .ci/protoc-js.sh [dir])"
set -euo pipefail
dir="${1:-${TMPDIR:-/tmp}/protoc-js-3.12}"
if [ ! -x "$dir/protoc" ]; then
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/root"
  echo 'deb http://deb.debian.org/debian bullseye main' > "$dir/apt/sources.list"
  apt=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
       -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o APT::Sandbox::User=root)
  apt-get "${apt[@]}" update -qq >&2
  (cd "$dir/apt" && apt-get "${apt[@]}" download -qq protobuf-compiler=3.12.4-1+deb11u1 libprotoc23=3.12.4-1+deb11u1 libprotobuf23=3.12.4-1+deb11u1 >&2)
  for deb in "$dir"/apt/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/root/usr/lib/x86_64-linux-gnu" exec "%s/root/usr/bin/protoc" "$@"\n' "$dir" "$dir" > "$dir/protoc"
  chmod +x "$dir/protoc"
fi
echo "$dir/protoc"
