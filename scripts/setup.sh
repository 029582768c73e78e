#!/usr/bin/env bash
# What the tests need beyond `npm ci`, installed once (idempotent, quick when
# all is there); `npm test` runs it first (pretest) and so does .ci/run.
#   - Debian packages, when run as root (CI, the project's machines):
#     postgresql-15 (initdb / pg_ctl for the throwaway clusters),
#     chromium-headless-shell (the viewer's browser tests), docker-compose
#     (validates docker-compose.yml), prometheus (promtool checks deploy/).
#     Not root: it names what is missing, and the tests that need it skip
#     with a loud warning.
#   - The pinned generators and the Python test venv (scripts/gen-tools.sh:
#     Python 3, Go 1.26 and Maven from the machine, packages from PyPI, the Go
#     module proxy and Maven Central), the Go client's modules (go.sum) and
#     the Java client's Maven dependencies (once per change of its pom.xml, so
#     that test files that run Maven side by side never download into ~/.m2
#     at the same time).
#   - The optional native AES-GCM addon (scripts/build-native.mjs; quick
#     when built; under CI its absence is an error, elsewhere a notice).
set -euo pipefail
cd "$(dirname "$0")/.."

DEBS=(postgresql-15 chromium-headless-shell docker-compose prometheus)
missing=()
# Installed, not merely known: a removed package keeps a status ("deinstall
# ok config-files") that `dpkg -s` answers 0 for.
for deb in "${DEBS[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$deb" 2>/dev/null)" = "install ok installed" ] || missing+=("$deb")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get install ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
      || { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
  else
    echo "setup: *** not root: the tests that need ${missing[*]} will be skipped (apt-get install ${missing[*]}) ***" >&2
  fi
fi

if command -v python3 >/dev/null && command -v go >/dev/null && command -v mvn >/dev/null; then
  bash scripts/gen-tools.sh >/dev/null
  (cd clients/go && go mod download)
  pom=$(sha256sum clients/java/pom.xml | cut -d' ' -f1)
  if [ "$(cat .cache/java-deps.stamp 2>/dev/null)" != "$pom" ]; then
    (cd clients/java && mvn -q -B -Dstyle.color=never dependency:go-offline >&2)
    echo "$pom" >.cache/java-deps.stamp
  fi
else
  echo "setup: *** python3, go or mvn missing: the Python, Go and Java client tests will be skipped ***" >&2
fi

if [ -n "${CI:-}" ]; then
  node scripts/build-native.mjs --require
else
  node scripts/build-native.mjs
fi
