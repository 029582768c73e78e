#!/usr/bin/env bash
# The Java conformance runner (conformance/README.md, "A runner"): runs every
# vector of CONFORMANCE_VECTORS against SESSIOND_ADDR through the Java client
# (io.github.sessiond.client.ConformanceRunner, in src/test/java) and writes
# CONFORMANCE_OUT; exit 0 when every vector passed, 1 otherwise.
#
# It builds once, into target/conformance (its own build directory, so that it
# never races a `mvn verify` of the same checkout), and reuses that build and
# its classpath file until pom.xml or a file under src/ changes: a repeated run
# is one `java` start (about a second), not a Maven run.
set -euo pipefail

# Paths of the environment are the caller's: make them absolute before the cd.
absolute() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
for var in CONFORMANCE_VECTORS CONFORMANCE_OUT SESSIOND_RESTART_DIR; do
  if [ -n "${!var:-}" ]; then export "$var=$(absolute "${!var}")"; fi
done
cd "$(dirname "$0")"

out=target/conformance
classpath="$out/classpath.txt"
stamp="$out/built.stamp"
if [ ! -f "$stamp" ] || [ ! -f "$classpath" ] ||
  [ -n "$(find pom.xml src -newer "$stamp" -print -quit)" ]; then
  mkdir -p "$out"
  # Stamped with the time the build STARTED: a file edited during the build
  # is newer, and the next run builds again.
  touch "$stamp.new"
  mvn -q -B -Dsessiond.build.dir="$PWD/$out/build" test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/$classpath" >&2
  mv "$stamp.new" "$stamp"
fi
exec java -cp "$out/build/test-classes:$out/build/classes:$(cat "$classpath")" \
  io.github.sessiond.client.ConformanceRunner "$@"
