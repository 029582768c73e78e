import { build } from "esbuild";
import { describe, expect, it } from "vitest";

/**
 * sessiond/web must load in a browser: bundled for the browser platform,
 * every module it reaches resolves without Node (a `node:` import, or
 * connect-node, fails the build). The size is printed: what a page pays.
 */
describe("sessiond/web in a browser bundle", () => {
  it("bundles for the browser with no Node module", { timeout: 30_000 }, async () => {
    const result = await build({
      entryPoints: [new URL("./index.ts", import.meta.url).pathname],
      bundle: true,
      platform: "browser",
      format: "esm",
      minify: true,
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((i) => i.includes("connect-web"))).toBe(true);
    expect(inputs.filter((i) => /^node:|connect-node|\/node_modules\/undici\//.test(i))).toEqual(
      [],
    );
    const bytes = result.outputFiles[0]?.contents.length ?? 0;
    expect(bytes).toBeGreaterThan(10_000);
    console.log(`sessiond/web browser bundle: ${(bytes / 1024).toFixed(1)} KiB minified`);
  });

  it("a Node module reached from the entry fails the bundle (the check bites)", {
    timeout: 30_000,
  }, async () => {
    await expect(
      build({
        stdin: {
          contents: 'import "node:http2"; export * from "./index.ts";',
          resolveDir: new URL(".", import.meta.url).pathname,
          loader: "ts",
        },
        bundle: true,
        platform: "browser",
        write: false,
        logLevel: "silent",
      }),
    ).rejects.toThrow(/node:http2/);
  });
});
