// Bundles the web viewer (src/ui) for browsers into a folder of static files
// that `sessiond serve` serves at /ui/ (src/server/http/ui-assets.ts): one script
// and one stylesheet with content hashes in their names (cached for good),
// and index.html naming them (revalidated). `npm run build` writes dist/ui;
// the browser tests build into a temporary folder with buildUi(dir).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SRC = join(ROOT, "src", "ui");

/** Builds the viewer into `outdir` (emptied first); returns the files written. */
export async function buildUi(outdir) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: [join(SRC, "main.ts"), join(SRC, "app.css")],
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    minify: true,
    entryNames: "[name]-[hash]",
    outdir,
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.endsWith(".js"));
  const style = outputs.find((f) => f.endsWith(".css"));
  const html = readFileSync(join(SRC, "index.html"), "utf8")
    .replace("app.js", script)
    .replace("app.css", style);
  writeFileSync(join(outdir, "index.html"), html);
  return [...outputs, "index.html"];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await buildUi(resolve(process.argv[2] ?? join(ROOT, "dist", "ui")));
  // stderr: `npm pack --json` runs this build (prepack) and its stdout must stay JSON.
  console.error(`web viewer: ${files.join(", ")}`);
}
