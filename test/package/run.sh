#!/usr/bin/env bash
# The npm package as a user gets it (issue 13): pack the tarball (prepack
# builds dist/), install it offline into a fresh project, start a server from
# the INSTALLED package's bin, and run there, with plain node and no
# TypeScript loader: an ESM script, a CommonJS script (also with require(esm)
# switched off, as Node 20 before 20.19 behaves) and a strict TypeScript
# project type-checked by the repository's tsc, each creating a session,
# appending, reading the state, forking and watching, plus the embedded store
# and an in-process server. Prints the `npm pack --dry-run` figures and the
# installed size; exits non-zero on any failure.
#
# It packs a copy of the package's sources, so the checkout's dist/ (which
# tests and running servers may be using) is never rebuilt under them.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$REPO/test/package"
TSC="$REPO/node_modules/typescript/bin/tsc"

work=$(mktemp -d "${TMPDIR:-/tmp}/sessiond-package-XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

t0=$(date +%s%N)
phase_start=$t0
phase() { # phase NAME: prints how long the phase that just ended took
  local now
  now=$(date +%s%N)
  printf '  [%s: %.1f s]\n' "$1" "$(((now - phase_start) / 1000000))e-3"
  phase_start=$now
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

echo "== pack (a copy of the sources; prepack builds dist/)"
copy="$work/repo"
mkdir -p "$copy"
for f in package.json package-lock.json tsconfig.json tsconfig.build.json tsconfig.types.json \
  tsconfig.cjs.json bin scripts src gen proto native README.md LICENSE; do
  if [ -e "$REPO/$f" ]; then cp -R "$REPO/$f" "$copy/"; fi
done
rm -rf "$copy/native/build" # prepack compiles the addon afresh, as a clean checkout would
ln -s "$REPO/node_modules" "$copy/node_modules"
# --json, as tools that parse it run it: the prepack build must leave stdout to npm's JSON.
(cd "$copy" && npm pack --json --pack-destination "$work" --no-fund >"$work/pack.json" 2>"$work/pack.log") \
  || { cat "$work/pack.json" "$work/pack.log"; fail "npm pack"; }
node -e 'JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"))' "$work/pack.json" 2>/dev/null \
  || { head -c 2000 "$work/pack.json"; fail "npm pack --json printed more than JSON on stdout"; }
tgz=$(ls "$work"/sessiond-*.tgz)
[ -d "$copy/dist/cjs" ] || fail "prepack did not build dist/ (no dist/cjs)"
phase "npm pack with prepack build"

(cd "$copy" && npm pack --dry-run --ignore-scripts --json 2>/dev/null) >"$work/dry-run.json"
node - "$work/dry-run.json" <<'EOF'
const [{ files, entryCount, size, unpackedSize }] = JSON.parse(
  require("node:fs").readFileSync(process.argv[2], "utf8"),
);
const kb = (n) => `${(n / 1024).toFixed(1)} kB`;
console.log(`npm pack --dry-run: ${entryCount} files, tarball ${kb(size)}, unpacked ${kb(unpackedSize)}`);
const top = {};
for (const { path } of files) {
  const key = path.split("/").slice(0, path.startsWith("dist/") ? 2 : 1).join("/");
  top[key] = (top[key] ?? 0) + 1;
}
console.log(`  ${Object.entries(top).map(([k, n]) => `${k}: ${n}`).join(", ")}`);
const shipped =
  /^(bin\/|dist\/|proto\/|native\/load\.cjs$|native\/build\/aes-gcm-[a-z0-9]+-[a-z0-9]+\.node$|package\.json$|README\.md$|LICENSE$)/;
const bad = files
  .map((f) => f.path)
  .filter(
    (p) =>
      !shipped.test(p) ||
      /\.test\.|\.map$|\.build-stamp$|^dist\/gen\/bench\//.test(p) ||
      (p.endsWith(".ts") && !p.endsWith(".d.ts")),
  );
if (bad.length > 0) {
  console.error(`files that do not run (tests, sources, maps) in the tarball:\n  ${bad.join("\n  ")}`);
  process.exit(1);
}
for (const need of ["bin/sessiond.js", "dist/src/cli/main.js", "dist/cjs/package.json",
  "dist/src/index.d.ts", "dist/cjs/src/index.d.ts", "dist/src/web/index.d.ts", "proto/sessiond/v1/session_service.proto",
  "dist/src/adapters/openai-agents/index.d.ts", "dist/cjs/src/adapters/claude-agent-sdk/index.js",
  "dist/src/adapters/langgraph/index.js", "dist/cjs/src/adapters/google-adk/index.d.ts", "dist/ui/index.html",
  "native/load.cjs", ...(process.env.CI ? [`native/build/aes-gcm-${process.platform}-${process.arch}.node`] : [])]) {
  if (!files.some((f) => f.path === need)) {
    console.error(`missing from the tarball: ${need}`);
    process.exit(1);
  }
}
EOF
phase "dry-run figures"

echo "== install the tarball into a fresh project (offline, from npm's cache)"
app="$work/app"
mkdir -p "$app"
cp "$HERE"/consumer/esm.mjs "$HERE"/consumer/cjs.cjs "$HERE"/consumer/adapters.mjs "$HERE"/consumer/typed.ts \
  "$HERE"/consumer/typed-require.cts "$HERE"/consumer/tsconfig.json "$app/"
printf '{ "name": "sessiond-package-test", "private": true, "type": "module" }\n' >"$app/package.json"
# Offline from npm's cache (filled by npm ci); where a registry is reachable a
# dependency missing from the cache may still come from it.
if ! (cd "$app" && npm install --offline --no-audit --no-fund "$tgz" >"$work/install.log" 2>&1); then
  cat "$work/install.log"
  echo "(offline install failed; trying --prefer-offline)"
  (cd "$app" && npm install --prefer-offline --no-audit --no-fund "$tgz" >"$work/install.log" 2>&1) \
    || { cat "$work/install.log"; fail "npm install of the tarball"; }
fi
[ ! -e "$app/node_modules/tsx" ] || fail "tsx was installed with the package (a runtime dependency?)"
[ ! -e "$app/node_modules/sessiond/src" ] || fail "the package ships src/"
pkg_kb=$(du -sk --apparent-size "$app/node_modules/sessiond" | cut -f1)
all_kb=$(du -sk --apparent-size "$app/node_modules" | cut -f1)
echo "installed: sessiond ${pkg_kb} kB; with its dependencies ${all_kb} kB" \
  "($(cd "$app/node_modules" && ls -d @*/* [!@]* | tr '\n' ' '))"
# The TypeScript project's Node types: the repository's @types/node (npm's
# cache holds its tarball but not its registry metadata, so no offline install).
mkdir -p "$app/node_modules/@types"
ln -s "$REPO/node_modules/@types/node" "$app/node_modules/@types/node"
phase "npm install --offline"

echo "== start a server from the installed package's bin"
bin="$app/node_modules/.bin/sessiond"
version=$("$bin" --version)
echo "sessiond --version: $version"
"$bin" serve --listen 127.0.0.1:0 --data-dir "$work/data" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
url=""
for _ in $(seq 1 200); do
  url=$(sed -nE 's/.*listening on (http:\/\/[^,]+),.*/\1/p' "$work/server.out")
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/server.out" "$work/server.err"; fail "the installed bin did not serve"; }
echo "$(cat "$work/server.out")"
export SESSIOND_URL="$url"
# What the consumers must find sealing with: the native AES-GCM addon when the
# tarball holds it for this platform (CI requires that above), else node:crypto.
if tar -tzf "$tgz" | grep -q "^package/native/build/aes-gcm-$(node -p 'process.platform + "-" + process.arch').node$"; then
  export SESSIOND_EXPECT_AEAD=native
else
  export SESSIOND_EXPECT_AEAD=node:crypto
fi
# The web viewer ships in the package and the installed bin serves it.
node -e 'fetch(process.argv[1] + "/ui/").then(async (r) => {
  const csp = r.headers.get("content-security-policy") ?? "";
  if (r.status !== 200 || !csp.includes("default-src") || !(await r.text()).includes("<script type=\"module\""))
    throw new Error(`/ui/ answered ${r.status}, CSP "${csp}"`);
  console.log("web viewer served at /ui/");
})' "$url"
phase "server start"

echo "== ESM (.mjs)"
(cd "$app" && node esm.mjs)
phase "esm.mjs"

echo "== CommonJS (.cjs)"
(cd "$app" && node cjs.cjs)
if node --no-experimental-require-module -e 0 2>/dev/null; then
  echo "again with --no-experimental-require-module (require cannot load ESM, as before Node 20.19):"
  (cd "$app" && node --no-experimental-require-module cjs.cjs)
fi
phase "cjs.cjs"

echo "== agent-SDK adapters (sessiond/openai-agents, sessiond/claude-agent-sdk, sessiond/langgraph, sessiond/google-adk)"
(cd "$app" && node adapters.mjs)
phase "adapters.mjs"

echo "== strict TypeScript project (the repository's tsc; then run the output with node)"
(cd "$app" && node "$TSC" --noEmit -p tsconfig.json)
(cd "$app" && node "$TSC" -p tsconfig.json && node out/typed.js && node out/typed-require.cjs)
phase "tsc --noEmit, tsc, node"

kill -TERM "$server_pid"
code=0
wait "$server_pid" || code=$?
server_pid=""
[ "$code" -eq 0 ] || { cat "$work/server.err"; fail "the server exited with $code on SIGTERM"; }

echo "== a package without dist/ says so"
mv "$app/node_modules/sessiond/dist" "$work/dist-moved"
if out=$("$bin" --version 2>&1); then fail "the bin ran without dist/: $out"; fi
grep -q "compiled code is missing" <<<"$out" || fail "unclear error without dist/: $out"
echo "$out" | head -1
phase "missing dist"

printf 'package test: ok in %.1f s\n' "$((($(date +%s%N) - t0) / 1000000))e-3"
