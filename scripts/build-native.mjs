// Compiles native/aes-gcm.c, the optional AES-256-GCM addon that sealing
// uses when it is there (src/storage/seal/native-aead.ts says why), into
// native/build/aes-gcm-<platform>-<arch>.node, with the machine's C compiler
// ($CC, else cc) against the headers of the Node that runs this script
// (<node>/../include/node: node_api.h and Node's own OpenSSL headers; the
// addon's OpenSSL symbols are Node's, resolved when it loads).
//
// Optional by design: without a compiler or the headers it says so and
// exits 0, and sealing goes on with node:crypto (the same bytes, slower).
// --require makes a missing build an error (CI: the benchmarks and the
// tests of the native path must not quietly run without it).
// Quick when the build is newer than its source and this script.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE = join(ROOT, "native", "aes-gcm.c");
const OUT = join(ROOT, "native", "build", `aes-gcm-${process.platform}-${process.arch}.node`);
const required = process.argv.includes("--require");

function skip(why) {
  const line = `native AES-GCM: not built (${why}); sealing uses node:crypto`;
  if (required) {
    console.error(`${line}, and --require was given`);
    process.exit(1);
  }
  console.error(line);
  process.exit(0);
}

const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : 0);
if (mtime(OUT) > Math.max(mtime(SOURCE), mtime(fileURLToPath(import.meta.url)))) process.exit(0);
if (process.platform === "win32") skip("Windows is not supported by this build script");

const include = resolve(dirname(process.execPath), "..", "include", "node");
for (const header of ["node_api.h", join("openssl", "evp.h")]) {
  if (!existsSync(join(include, header))) skip(`no ${join(include, header)}`);
}
const cc = process.env.CC || "cc";
const tmp = `${OUT}.${process.pid}.tmp`;
mkdirSync(dirname(OUT), { recursive: true });
const args = ["-O2", "-shared", "-fPIC", "-Wall", "-Werror", "-I", include, "-o", tmp, SOURCE];
if (process.platform === "darwin") args.unshift("-undefined", "dynamic_lookup");
const r = spawnSync(cc, args, { encoding: "utf8" });
if (r.error || r.status !== 0) {
  rmSync(tmp, { force: true });
  skip(
    `${cc} failed: ${(r.error?.message ?? r.stderr).trim().split("\n").slice(0, 5).join(" | ")}`,
  );
}
renameSync(tmp, OUT);
console.error(`native AES-GCM: built ${OUT.slice(ROOT.length + 1)}`);
