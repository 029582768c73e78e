import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The version `sessiond --version` prints: package.json's, found by walking
 * up from this file, because this file runs from src/cli (tsx), from
 * dist/src/cli (the build) and from node_modules/sessiond alike, each at a
 * different depth below the package root.
 */
export function packageVersion(from: string = fileURLToPath(import.meta.url)): string {
  return packageOf(from)?.version ?? "unknown";
}

/**
 * The built web viewer of this package (`npm run build` writes dist/ui),
 * found the same way from wherever this file runs.
 */
export function packageUiDir(from: string = fileURLToPath(import.meta.url)): string | undefined {
  const root = packageOf(from)?.root;
  return root === undefined ? undefined : join(root, "dist", "ui");
}

function packageOf(from: string): { root: string; version: string } | undefined {
  let dir = dirname(from);
  for (;;) {
    const version = sessiondVersionIn(join(dir, "package.json"));
    if (version !== undefined) return { root: dir, version };
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The version in a package.json that is sessiond's; undefined for any other file or none. */
function sessiondVersionIn(path: string): string | undefined {
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
  const { name, version } = (pkg ?? {}) as { name?: unknown; version?: unknown };
  return name === "sessiond" && typeof version === "string" ? version : undefined;
}
