#!/usr/bin/env bash
# Builds kustomize from its Go module, the version kubectl v1.34 (the one-node cluster's, npm run
# bench:kubernetes) has built in, once into the user's cache (~30 s), and prints its path for
# KUSTOMIZE: test/deploy.test.js renders the small-node overlay with it. Into a temporary directory
# first: the cache never holds half a binary.
# Usage: KUSTOMIZE="$(bash .ci/kustomize.sh)"
set -euo pipefail
version=v5.7.1
dir="${XDG_CACHE_HOME:-$HOME/.cache}/ws-json-vs-protobuf/kustomize-$version"
if [ ! -x "$dir/kustomize" ]; then
  building="$(mktemp -d "${TMPDIR:-/tmp}/kustomize-XXXXXX")"
  GOBIN="$building" go install "sigs.k8s.io/kustomize/kustomize/v5@$version" >&2
  mkdir -p "$dir"
  mv "$building/kustomize" "$dir/kustomize"
  rmdir "$building"
fi
echo "$dir/kustomize"
