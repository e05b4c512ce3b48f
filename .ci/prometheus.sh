#!/usr/bin/env bash
# Builds Prometheus 3 from its Go module (its v0.316.0 tag is Prometheus 3.16), once into the user's
# cache (~10 min and ~4 GB of modules the first time), and prints its path: Debian's Prometheus
# (2.42) has no OTLP receiver, and --out otlp's test streams to one (test/process/otlp.test.js,
# PROMETHEUS_OTLP). Into a temporary directory first: the cache never holds half a binary.
# Usage: PROMETHEUS_OTLP="$(bash .ci/prometheus.sh)"
set -euo pipefail
version=v0.316.0
dir="${XDG_CACHE_HOME:-$HOME/.cache}/ws-json-vs-protobuf/prometheus-$version"
if [ ! -x "$dir/prometheus" ]; then
  building="$(mktemp -d "${TMPDIR:-/tmp}/prometheus-XXXXXX")"
  GOBIN="$building" go install "github.com/prometheus/prometheus/cmd/prometheus@$version" >&2
  mkdir -p "$dir"
  mv "$building/prometheus" "$dir/prometheus"
  rmdir "$building"
fi
echo "$dir/prometheus"
