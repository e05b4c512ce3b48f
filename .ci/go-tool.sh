#!/usr/bin/env bash
# Builds a Go program from its module, once into the user's cache, and prints its path. Into a
# temporary directory first: the cache never holds half a binary.
# Usage: bash .ci/go-tool.sh NAME MODULE/PATH@VERSION   (NAME: the binary go install makes)
set -euo pipefail
name=$1
package=$2
dir="${XDG_CACHE_HOME:-$HOME/.cache}/ws-json-vs-protobuf/$name-${package##*@}"
if [ ! -x "$dir/$name" ]; then
  building="$(mktemp -d "${TMPDIR:-/tmp}/$name-XXXXXX")"
  GOBIN="$building" go install "$package" >&2
  mkdir -p "$dir"
  mv "$building/$name" "$dir/$name"
  rmdir "$building"
fi
echo "$dir/$name"
