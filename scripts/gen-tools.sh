#!/usr/bin/env bash
# Installs the pinned code generators of every language into .cache/gen
# (git-ignored), once per change of the pins in scripts/gen-tools/:
#   .cache/gen/venv         grpcio-tools (protoc + gRPC Python) and mypy-protobuf, from PyPI
#   .cache/gen/bin          protoc-gen-go, protoc-gen-go-grpc (go install, tools go.mod);
#                           protoc and protoc-gen-grpc-java (Maven Central, linux-x86_64)
# Needs python3 (3.10+: protobuf 7), go (1.26, with the module proxy) and mvn on PATH.
# Prints the directory; scripts/generate.sh calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=$root/.cache/gen
pins=$(cat scripts/gen-tools.sh scripts/gen-tools/requirements.txt scripts/gen-tools/go.mod \
  scripts/gen-tools/go.sum scripts/gen-tools/maven.txt | sha256sum | cut -d' ' -f1)
if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$pins" ]; then
  echo "$dir"
  exit 0
fi
for tool in python3 go mvn; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "gen-tools: '$tool' is missing (Python 3.10+, Go 1.26 and Maven are needed; see README, Clients)" >&2
    exit 1
  }
done
rm -rf "$dir"
mkdir -p "$dir/bin"
{
  python3 -m venv "$dir/venv"
  "$dir/venv/bin/pip" install --disable-pip-version-check -q -r scripts/gen-tools/requirements.txt
  (cd scripts/gen-tools && GOBIN="$dir/bin" GOFLAGS=-mod=mod go install tool)
  mvn_dir=$(mktemp -d)
  grep -v '^#' scripts/gen-tools/maven.txt | while read -r artifact name; do
    [ -n "$artifact" ] || continue
    (cd "$mvn_dir" && mvn -B -q -Dstyle.color=never dependency:copy -Dartifact="$artifact" -DoutputDirectory="$mvn_dir/out")
    # dependency:copy names the file artifactId-version-classifier.exe
    mv "$mvn_dir"/out/*.exe "$dir/bin/$name"
    chmod +x "$dir/bin/$name"
  done
  rm -rf "$mvn_dir"
} >&2
echo "$pins" >"$dir/stamp"
echo "$dir"
