// Draws the rooms of the house for ARCHITECTURE.md: `npm run architecture:picture`
// rewrites the Mermaid block between the `rooms:begin` / `rooms:end` markers from
// the imports as they are (dependency-cruiser, the same config CI enforces), so the
// picture cannot drift: `--check` (run by test/architecture/picture.test.ts) fails
// when the committed block differs from a fresh drawing. Each node is a room: a folder of src/ (the
// server's rooms one by one, its composition files as "server (root)"), each
// arrow "imports from". Tests are left out; so are gen/ and libraries.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
const FILE = join(REPO, "ARCHITECTURE.md");
const BEGIN = "<!-- rooms:begin (npm run architecture:picture) -->";
const END = "<!-- rooms:end -->";

/** The rooms' import graph as a Mermaid flowchart. */
export function drawRooms() {
  const r = spawnSync(
    join(REPO, "node_modules/.bin/depcruise"),
    [
      "src",
      "--config",
      ".dependency-cruiser.cjs",
      "--exclude",
      "\\.test\\.ts$",
      "--collapse",
      "^src/server/[a-z-]+/|^src/[a-z-]+/",
      "--output-type",
      "json",
    ],
    { cwd: REPO, encoding: "utf8", maxBuffer: 64 << 20 },
  );
  if (r.status !== 0) {
    throw new Error(`depcruise failed (run npm ci first?): ${r.error?.message ?? r.stderr}`);
  }
  const { modules } = JSON.parse(r.stdout);
  const room = (path) => {
    const m = /^src\/(.+)\/$/.exec(path);
    if (m === null) return undefined;
    return m[1] === "server" ? "server (root)" : m[1];
  };
  const edges = new Set();
  const rooms = new Set();
  for (const m of modules) {
    const from = room(m.source);
    if (from === undefined) continue;
    rooms.add(from);
    for (const d of m.dependencies) {
      const to = room(d.resolved);
      if (to === undefined || to === from) continue;
      rooms.add(to);
      edges.add(`${from}\u0000${to}`);
    }
  }
  const id = (name) => name.replace(/[^a-z]+/g, "_").replace(/_$/, "");
  const lines = ["```mermaid", "flowchart TD"];
  const server = [...rooms].filter((n) => n.startsWith("server")).sort();
  lines.push('  subgraph server_rooms["src/server"]');
  for (const n of server) lines.push(`    ${id(n)}["${n.replace(/^server\//, "")}"]`);
  lines.push("  end");
  for (const n of [...rooms].filter((n) => !n.startsWith("server")).sort()) {
    lines.push(`  ${id(n)}["${n}"]`);
  }
  for (const e of [...edges].sort()) {
    const [from, to] = e.split("\u0000");
    lines.push(`  ${id(from)} --> ${id(to)}`);
  }
  lines.push("```");
  return lines.join("\n");
}

/** ARCHITECTURE.md with its rooms block drawn afresh. */
export function withFreshPicture(markdown) {
  const a = markdown.indexOf(BEGIN);
  const b = markdown.indexOf(END);
  if (a < 0 || b < a) throw new Error(`ARCHITECTURE.md has no ${BEGIN} … ${END} block`);
  return `${markdown.slice(0, a + BEGIN.length)}\n${drawRooms()}\n${markdown.slice(b)}`;
}

export const ARCHITECTURE_FILE = FILE;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const before = readFileSync(FILE, "utf8");
  const after = withFreshPicture(before);
  if (process.argv.includes("--check")) {
    if (before !== after) {
      console.error(
        "ARCHITECTURE.md: the rooms picture is stale: run `npm run architecture:picture`",
      );
      process.exit(1);
    }
    console.log("ARCHITECTURE.md: the rooms picture matches the imports");
  } else {
    writeFileSync(FILE, after);
    console.log(
      before === after ? "ARCHITECTURE.md: rooms unchanged" : "ARCHITECTURE.md: rooms redrawn",
    );
  }
}
