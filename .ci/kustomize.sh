#!/usr/bin/env bash
# kustomize as kubectl v1.34 (the one-node cluster's, npm run bench:kubernetes) has it built in,
# built from its Go module once (~30 s), its path printed for KUSTOMIZE: test/deploy.test.js
# renders the small-node overlay with it.
# Usage: KUSTOMIZE="$(bash .ci/kustomize.sh)"
exec bash "$(dirname "$0")/go-tool.sh" kustomize sigs.k8s.io/kustomize/kustomize/v5@v5.7.1
