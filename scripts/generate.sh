#!/usr/bin/env bash
# npm run generate: every generated file from proto/, in one step.
#   gen/                              TypeScript (protoc-gen-es, buf.gen.yaml)
#   clients/python/src/sessiond/v1    Python messages, gRPC stubs and their .pyi (grpcio-tools, mypy-protobuf)
#   clients/go/sessiondv1             Go messages and grpc-go stubs (buf.gen.clients.yaml)
#   clients/java/src/main/generated   Java messages and grpc-java stubs (buf.gen.clients.yaml)
# The generators are pinned in scripts/gen-tools/ and installed by
# scripts/gen-tools.sh (Python 3, Go 1.26 and Maven needed). With an argument,
# everything is written under that directory instead (.ci/check-gen compares
# it with the committed files).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.}
tools=$(bash scripts/gen-tools.sh)

py_out=$out/clients/python/src
if [ "$out" = . ]; then
  npx buf generate
  rm -rf clients/python/src/sessiond/v1 clients/go/sessiondv1 clients/java/src/main/generated
  npx buf generate --template buf.gen.clients.yaml --path proto/sessiond/v1
else
  npx buf generate -o "$out"
  npx buf generate --template buf.gen.clients.yaml --path proto/sessiond/v1 -o "$out"
fi
mkdir -p "$py_out"
# grpcio-tools' protoc writes the messages and the gRPC stubs (whose version
# check matches the grpcio it pins); mypy-protobuf writes typed .pyi for both.
"$tools/venv/bin/python" -m grpc_tools.protoc -Iproto \
  --plugin=protoc-gen-mypy="$tools/venv/bin/protoc-gen-mypy" \
  --plugin=protoc-gen-mypy_grpc="$tools/venv/bin/protoc-gen-mypy_grpc" \
  --python_out="$py_out" --grpc_python_out="$py_out" \
  --mypy_out="$py_out" --mypy_grpc_out="$py_out" \
  proto/sessiond/v1/*.proto 2> >(grep -v "^Writing mypy to" >&2)
# Makes sessiond.v1 a regular package (setuptools finds it, type checkers too).
: >"$py_out/sessiond/v1/__init__.py"
