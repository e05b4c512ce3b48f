#!/bin/sh
# Regenerates pb/ from the project's proto/*.proto (the .proto files stay as they are: each file's
# Go package is given here with protoc's M flags). Needs protoc and protoc-gen-go
# (go install google.golang.org/protobuf/cmd/protoc-gen-go@latest).
set -eu
cd "$(dirname "$0")"
PATH="$PATH:$(go env GOPATH)/bin"
MOD=wsbench/server
opts=""
for f in ../../proto/*.proto; do
  name=$(basename "$f")
  pkg=$(sed -n 's/^package \([a-z_]*\);.*/\1/p' "$f")
  opts="$opts --go_opt=M$name=$MOD/pb/$pkg"
done
find pb -name "*.pb.go" -delete 2>/dev/null || true
mkdir -p pb
# shellcheck disable=SC2086
protoc -I ../../proto --go_out=. --go_opt=module=$MOD $opts ../../proto/*.proto
