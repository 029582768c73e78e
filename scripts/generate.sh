#!/usr/bin/env bash
# npm run generate: every generated file from proto/, in one step.
#   gen/                          TypeScript (protoc-gen-es, buf.gen.yaml)
#   clients/python/src/sessiond/v1  Python messages, .pyi stubs, grpc stubs
#   clients/go/sessiondv1         Go messages and grpc-go stubs
# The client half (buf.gen.clients.yaml) needs Debian's protoc and gRPC
# plugins and Go; see README, Clients. With an argument, everything is
# written under that directory instead (.ci/check-gen compares it with the
# committed files).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.}

need() {
  command -v "$1" >/dev/null 2>&1 && return
  echo "generate: '$1' is missing; install the client generators (Debian 12):" >&2
  echo "  apt-get install protobuf-compiler protobuf-compiler-grpc protoc-gen-go-grpc golang-go golang-google-protobuf-dev" >&2
  exit 1
}
need protoc
need grpc_python_plugin
need protoc-gen-go-grpc
need go

# Debian's /usr/bin/protoc-gen-go is the old APIv1 generator (it refuses proto3
# `optional`); build the current one from Debian's packaged protobuf-go source.
gen_go=.cache/bin/protoc-gen-go
if [ ! -x "$gen_go" ]; then
  mkdir -p .cache/bin
  GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$PWD/.cache/go-build" \
    go build -o "$gen_go" google.golang.org/protobuf/cmd/protoc-gen-go
fi

if [ "$out" = . ]; then
  npx buf generate
  rm -rf clients/python/src/sessiond/v1 clients/go/sessiondv1
  npx buf generate --template buf.gen.clients.yaml --path proto/sessiond/v1
else
  npx buf generate -o "$out"
  npx buf generate --template buf.gen.clients.yaml --path proto/sessiond/v1 -o "$out"
fi
# Makes sessiond.v1 a regular package (setuptools finds it, type checkers too).
: >"$out/clients/python/src/sessiond/v1/__init__.py"
