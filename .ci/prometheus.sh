#!/usr/bin/env bash
# Prometheus 3 from its Go module (its v0.316.0 tag is Prometheus 3.16), built once (~10 min and
# ~4 GB of modules the first time), its path printed: Debian's Prometheus (2.42) has no OTLP
# receiver, and --out otlp's test streams to one (test/process/otlp.test.js, PROMETHEUS_OTLP).
# Usage: PROMETHEUS_OTLP="$(bash .ci/prometheus.sh)"
exec bash "$(dirname "$0")/go-tool.sh" prometheus github.com/prometheus/prometheus/cmd/prometheus@v0.316.0
