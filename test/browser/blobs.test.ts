import { deflateSync } from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { openStore } from "../../src/index.js";
import {
  CHROMIUM,
  launch,
  noChromium,
  screenshotPath,
  tempDataDir,
  ViewerServer,
} from "./viewer-harness.js";

/**
 * Big parts in the viewer (issue 36, item 4): a 5 MB tool output and a
 * screenshot stored as blobs. The entry pane shows the output's first 200
 * characters and its size without reading the rest, and loads it all on
 * "load all"; the screenshot is fetched with GetBlob and drawn.
 */

const SESSION = "big-parts";
const OUTPUT = Array.from({ length: 100_000 }, (_, i) => `line ${i} of the build log`).join("\n");

/** CRC-32 as PNG chunks want it (zlib's crc32 is Node 22+). */
function crc32(buf: Uint8Array): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A 200 × 200 RGB PNG of noise (~120 KB: over the 64 KiB blob threshold). */
function noisePng(): Uint8Array {
  const w = 200;
  const rows: Buffer[] = [];
  let x = 12345;
  for (let y = 0; y < w; y++) {
    const row = Buffer.alloc(1 + w * 3);
    for (let i = 1; i < row.length; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      row[i] = x >> 16;
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(w, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

async function writeSession(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ sessionId: SESSION, title: "big parts" });
    const s = await store.open(undefined, SESSION);
    await s.append([
      {
        id: "shot",
        kind: {
          case: "message",
          value: {
            role: Role.USER,
            content: [
              { part: { case: "text", value: "the screen now" } },
              { part: { case: "image", value: { mimeType: "image/png", data: noisePng() } } },
            ],
          },
        },
      },
      {
        id: "out",
        kind: {
          case: "message",
          value: { role: Role.USER, content: [{ part: { case: "text", value: OUTPUT } }] },
        },
      },
    ]);
  } finally {
    await store.close();
  }
}

if (CHROMIUM === undefined) noChromium("big parts in the viewer");

describe.skipIf(CHROMIUM === undefined)("big parts in the viewer", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  beforeAll(async () => {
    const dataDir = tempDataDir();
    await writeSession(dataDir);
    server = new ViewerServer(dataDir);
    await server.start();
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("shows the start of a 5 MB output and loads the rest when asked; draws a screenshot", {
    timeout: 60_000,
  }, async () => {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const blobReads: number[] = [];
    page.on("response", (r) => {
      if (r.url().includes("GetBlob")) blobReads.push(r.status());
    });
    await page.goto(`${server.url}/ui/#/w/default/s/${SESSION}/e/out`);
    const box = page.locator("article.entry .part.blob.text");
    await box.waitFor();
    const before = (await box.textContent()) ?? "";
    expect(before).toContain("line 0 of the build log");
    expect(before).toContain("the first 200 characters of");
    expect(before).not.toContain("line 99999");
    expect(blobReads).toEqual([]); // nothing of the 5 MB read yet
    await page.click("article.entry button.load-blob");
    await page
      .locator("article.entry .part.text", { hasText: "line 99999 of the build log" })
      .waitFor();
    expect(blobReads.length).toBeGreaterThan(0);

    await page.goto(`${server.url}/ui/#/w/default/s/${SESSION}/e/shot`);
    const img = page.locator("article.entry .part.image img");
    await img.waitFor();
    // Polled through the locator: the viewer's CSP forbids the eval a waitForFunction needs.
    const loaded = () =>
      img.evaluate(
        (el) =>
          (el as unknown as { complete: boolean; naturalWidth: number }).complete &&
          (el as unknown as { complete: boolean; naturalWidth: number }).naturalWidth > 0,
      );
    for (let i = 0; i < 200 && !(await loaded()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(
      await img.evaluate(
        (el) => (el as unknown as { complete: boolean; naturalWidth: number }).naturalWidth,
      ),
    ).toBe(200);
    await page.screenshot({ path: screenshotPath("big-parts.png") });
  });
});
