/**
 * The fenced code blocks of README.md, with the directives written just
 * above them in HTML comments (invisible when the README is rendered):
 *
 *   <!-- readme-test: skip: <why this block cannot run here> -->
 *   <!-- readme-test: expect: <regex its stdout must match> -->
 *   <!-- readme-test: needs: python|go -->  (runs only where that toolchain is; under CI=true it must be)
 */
export interface CodeBlock {
  /** The fence's language ("sh", "ts", "python", ... or "" for none). */
  readonly lang: string;
  readonly code: string;
  /** 1-based line of the opening fence, for messages. */
  readonly line: number;
  /** Why the block is not run, when it says so. */
  readonly skip?: string;
  /** Patterns the block's stdout must match. */
  readonly expect: readonly RegExp[];
  /** A toolchain the block needs beyond Node ("python" or "go"). */
  readonly needs?: string;
}

const DIRECTIVE = /^<!-- readme-test: (skip|expect|needs): (.*) -->$/;

export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  let pending: { skip?: string; needs?: string; expect: RegExp[] } = { expect: [] };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const directive = DIRECTIVE.exec(line);
    if (directive !== null) {
      const [, kind, value = ""] = directive;
      if (kind === "skip") pending.skip = value.trim();
      else if (kind === "needs") pending.needs = value.trim();
      else pending.expect.push(new RegExp(value.trim(), "m"));
      continue;
    }
    const fence = /^```(\S*)/.exec(line);
    if (fence === null) {
      if (line.trim() !== "") pending = { expect: [] };
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !(lines[i] as string).startsWith("```"); i++) {
      body.push(lines[i] as string);
    }
    blocks.push({
      lang: fence[1] ?? "",
      code: `${body.join("\n")}\n`,
      line: start + 1,
      ...pending,
    });
    pending = { expect: [] };
  }
  return blocks;
}
