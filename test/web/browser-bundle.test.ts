/**
 * `sessiond/web` runs in browsers: everything reachable from src/web/index.ts
 * must bundle for the browser platform with no Node module (a `node:` import,
 * or connect-node, which needs node:http2). dependency-cruiser's
 * `browser-safe` rule checks the source imports; this bundles the entry the
 * way a page's bundler would, so a Node import that reaches it through a
 * package (not only our own files) fails too, and says which module.
 */
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { REPO } from "../harness/server.js";

/** Bundles `entry` for browsers; returns the modules that were Node's, and the bundle's size. */
async function bundleForBrowser(entry: string): Promise<{ nodeImports: string[]; bytes: number }> {
  const nodeImports: string[] = [];
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    platform: "browser",
    logLevel: "silent",
    plugins: [
      {
        name: "node-imports",
        setup(b) {
          // esbuild marks Node builtins as errors on the browser platform; record them by name.
          b.onResolve({ filter: /^(node:|http2$|http$|https$|net$|tls$|fs$|zlib$)/ }, (args) => {
            nodeImports.push(`${args.path} (from ${args.importer.replace(`${REPO}/`, "")})`);
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  const bytes = result.outputFiles.reduce((n, f) => n + f.contents.byteLength, 0);
  return { nodeImports, bytes };
}

describe("sessiond/web in a browser bundle", () => {
  it("bundles for the browser with no Node module reachable", async () => {
    const { nodeImports, bytes } = await bundleForBrowser(join(REPO, "src/web/index.ts"));
    expect(nodeImports).toEqual([]);
    expect(bytes).toBeGreaterThan(10_000); // the client, connect-web and the messages are in it
  });

  it("the check finds a Node module when one is reachable (sessiond/client, which uses connect-node)", async () => {
    const { nodeImports } = await bundleForBrowser(join(REPO, "src/client/index.ts"));
    expect(nodeImports.length).toBeGreaterThan(0);
  });
});
