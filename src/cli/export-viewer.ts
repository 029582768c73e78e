import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CliError } from "./command.js";
import { packageUiDir } from "./version.js";

/**
 * The built web viewer an HTML export embeds. The compiled command (the npm
 * package, a built checkout) uses the viewer built beside it (dist/ui,
 * `npm run build`). The command run from its TypeScript sources (a checkout:
 * bin/sessiond.js runs them through tsx when no fresh build exists) builds
 * the viewer from the same sources into a temporary folder first
 * (scripts/build-ui.mjs, esbuild: a devDependency), so the page always
 * matches the code that exports it; dist/ui may be missing or stale there.
 */
export async function viewerDir(
  given: string | undefined,
  from: string = fileURLToPath(import.meta.url),
): Promise<{ dir: string; done: () => void }> {
  const keep = { done: () => {} };
  if (given !== undefined) return { dir: given, ...keep };
  const root = join(from, "..", "..", "..");
  const script = join(root, "scripts", "build-ui.mjs");
  if (from.endsWith(".ts") && existsSync(script)) {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-export-ui-"));
    try {
      const { buildUi } = (await import(pathToFileURL(script).href)) as {
        buildUi(dir: string): Promise<string[]>;
      };
      await buildUi(dir);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw new CliError(`building the web viewer from the sources failed: ${String(err)}`);
    }
    return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
  }
  const dir = packageUiDir(from);
  if (dir === undefined) throw new CliError("the web viewer is not found: give --ui-dir");
  return { dir, ...keep };
}
