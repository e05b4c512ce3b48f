#!/bin/sh
# Regenerates pb/ from the project's proto/*.proto; `gen.sh --check` changes nothing and exits 1
# when pb/ is not what it would write. The .proto files stay as they are: each file's Go package
# is given here with protoc's M flags (the package named in the file: pb/bench, pb/people, ...).
# Needs protoc; protoc-gen-go is built from this module's own google.golang.org/protobuf, so the
# generated code matches the runtime it is compiled with.
set -eu
cd "$(dirname "$0")"
MOD=wsbench/server
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
opts=""
for f in ../../proto/*.proto; do
  name=$(basename "$f")
  pkg=$(sed -n 's/^package \([a-z_]*\);.*/\1/p' "$f")
  opts="$opts --go_opt=M$name=$MOD/pb/$pkg"
done
mkdir -p "$tmp/out"
# shellcheck disable=SC2086
protoc -I ../../proto --plugin=protoc-gen-go="$tmp/protoc-gen-go" --go_out="$tmp/out" --go_opt=module=$MOD $opts ../../proto/*.proto
if [ "${1:-}" = "--check" ]; then
  # protoc's version line differs from one machine to another: compare the rest.
  stale=""
  for f in $( (cd "$tmp/out" && find pb -name '*.pb.go'; find pb -name '*.pb.go') | sort -u); do
    if ! diff -q -I '^//[[:space:]]*protoc[[:space:]]' "$tmp/out/$f" "$f" >/dev/null 2>&1; then stale="$stale $f"; fi
  done
  if [ -n "$stale" ]; then echo "servers/go/pb is out of date (run servers/go/gen.sh):$stale" >&2; exit 1; fi
  exit 0
fi
find pb -name '*.pb.go' -delete 2>/dev/null || true
mkdir -p pb
cp -R "$tmp/out/pb/." pb/
