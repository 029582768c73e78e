import { EntryKind } from "../web/index.js";
import type { Node } from "./tree-node.js";

/** One line of the drawn tree. */
export interface Row {
  readonly node: Node;
  /**
   * Indentation: one step per fork off the way to it. The active path reads
   * straight down at 0, however many branch points it passes; a branch off
   * it is one step in, and a branch off that branch one more.
   */
  readonly depth: number;
  /** The entry has more than one child: its branches can be folded. */
  readonly branch: boolean;
  /** Its descendants are hidden; `hidden` says how many. */
  readonly folded: boolean;
  readonly hidden: number;
  readonly onPath: boolean;
}

/**
 * A session's tree in the browser, built from GetTree pages and then from
 * watched entries, in seq order (a parent always comes before its children).
 * Leaf entries (pointer moves, never on a path) move the current leaf but are
 * not drawn: they would show every rewind as a fake branch. The drawn order
 * is depth-first; at a branch point the branches off the current path come
 * first, folded by default, so the active path reads straight down.
 */
export class TreeModel {
  readonly nodes: Node[] = [];
  private leaf = "";
  private readonly byId = new Map<string, Node>();
  private readonly kids = new Map<string, Node[]>();
  private readonly labelsOn = new Map<string, string[]>();
  /** Entries whose folding the user flipped from the default. */
  private readonly flipped = new Set<string>();
  private pathMemo: Set<string> | undefined;
  private sizeMemo: Map<string, number> | undefined;
  private rowsMemo: Row[] | undefined;

  /** Adds the next entry (seq order); one already known is ignored. */
  add(n: Node): void {
    if (this.byId.has(n.id)) return;
    const grows = this.extendsLastRow(n);
    this.nodes.push(n);
    this.byId.set(n.id, n);
    this.sizeMemo = undefined;
    if (n.kind === EntryKind.LEAF) {
      this.setLeaf(n.leafId ?? this.leaf);
      return;
    }
    if (grows) {
      // An agent appending to its leaf, the common case: one more row, no full pass.
      this.pathMemo?.add(n.id);
      const last = this.rowsMemo?.[this.rowsMemo.length - 1] as Row;
      this.rowsMemo?.push({
        node: n,
        depth: last.depth,
        branch: false,
        folded: false,
        hidden: 0,
        onPath: true,
      });
    } else {
      this.pathMemo = undefined;
      this.rowsMemo = undefined;
    }
    this.leaf = n.id;
    if (n.parentId === undefined) return;
    const siblings = this.kids.get(n.parentId);
    if (siblings === undefined) this.kids.set(n.parentId, [n]);
    else siblings.push(n);
    if (n.kind === EntryKind.LABEL && n.label !== undefined) {
      const labels = this.labelsOn.get(n.parentId) ?? [];
      labels.push(n.label);
      this.labelsOn.set(n.parentId, labels);
    }
  }

  /** `n` is the first child of the last drawn row, which is the current leaf. */
  private extendsLastRow(n: Node): boolean {
    const last = this.rowsMemo?.[this.rowsMemo.length - 1]?.node;
    return (
      n.kind !== EntryKind.LEAF &&
      last !== undefined &&
      n.parentId === last.id &&
      last.id === this.leaf &&
      this.pathMemo !== undefined &&
      !this.kids.has(last.id)
    );
  }

  /** The current leaf: the newest entry, or where the newest Leaf entry moved it. */
  get leafId(): string {
    return this.leaf;
  }

  /** The leaf as the server reported it (GetTree's snapshot). */
  setLeaf(id: string): void {
    if (id === this.leaf) return;
    this.leaf = id;
    this.pathMemo = undefined;
    this.rowsMemo = undefined;
  }

  get(id: string): Node | undefined {
    return this.byId.get(id);
  }

  /** The labels Label entries put on this entry. */
  labelsOf(id: string): readonly string[] {
    return this.labelsOn.get(id) ?? [];
  }

  /** Path root → id (empty for an unknown id). */
  path(id: string): Node[] {
    const path: Node[] = [];
    for (let n = this.byId.get(id); n !== undefined; ) {
      path.push(n);
      n = n.parentId === undefined ? undefined : this.byId.get(n.parentId);
    }
    return path.reverse();
  }

  /** The ids on the path root → current leaf. */
  onPath(): Set<string> {
    this.pathMemo ??= new Set(this.path(this.leafId).map((n) => n.id));
    return this.pathMemo;
  }

  /** Folds or unfolds the branches below `id`. */
  toggle(id: string): void {
    if (!this.flipped.delete(id)) this.flipped.add(id);
    this.rowsMemo = undefined;
  }

  /** Unfolds every branch on the way to `id`, so it has a row. */
  reveal(id: string): void {
    for (const n of this.path(id).slice(0, -1)) if (this.isFolded(n)) this.toggle(n.id);
  }

  /** Folded by default: the first entry of a branch off the current path. */
  private isFolded(n: Node): boolean {
    const parent = n.parentId === undefined ? undefined : this.kids.get(n.parentId);
    const byDefault = parent !== undefined && parent.length > 1 && !this.onPath().has(n.id);
    return byDefault !== this.flipped.has(n.id);
  }

  /** Descendants of each entry (drawn ones), counted once per change. */
  private sizes(): Map<string, number> {
    if (this.sizeMemo !== undefined) return this.sizeMemo;
    const sizes = new Map<string, number>();
    for (let i = this.nodes.length - 1; i >= 0; i--) {
      const n = this.nodes[i] as Node;
      if (n.kind === EntryKind.LEAF || n.parentId === undefined) continue;
      sizes.set(n.parentId, (sizes.get(n.parentId) ?? 0) + 1 + (sizes.get(n.id) ?? 0));
    }
    this.sizeMemo = sizes;
    return sizes;
  }

  /** The rows to draw, depth first. */
  rows(): readonly Row[] {
    if (this.rowsMemo !== undefined) return this.rowsMemo;
    const rows: Row[] = [];
    const path = this.onPath();
    const sizes = this.sizes();
    const roots = this.nodes.filter(
      (n) => n.kind !== EntryKind.LEAF && (n.parentId === undefined || !this.byId.has(n.parentId)),
    );
    const stack = roots.reverse().map((node) => ({ node, depth: 0 }));
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      const { node, depth } = top;
      const kids = this.kids.get(node.id) ?? [];
      const folded = kids.length > 0 && this.isFolded(node);
      rows.push({
        node,
        depth,
        branch: kids.length > 1,
        folded,
        hidden: folded ? (sizes.get(node.id) ?? 0) : 0,
        onPath: path.has(node.id),
      });
      if (folded) continue;
      if (kids.length === 1) {
        stack.push({ node: kids[0] as Node, depth });
        continue;
      }
      // Pushed in reverse: popped off-path branches first, the path's child last.
      const ordered = [
        ...kids.filter((k) => !path.has(k.id)),
        ...kids.filter((k) => path.has(k.id)),
      ];
      for (let i = ordered.length - 1; i >= 0; i--) {
        const kid = ordered[i] as Node;
        stack.push({ node: kid, depth: path.has(kid.id) ? depth : depth + 1 });
      }
    }
    this.rowsMemo = rows;
    return rows;
  }

  /** The tips of the branches: entries nothing was appended to (Leaf entries aside). */
  tips(): Node[] {
    return this.nodes.filter((n) => n.kind !== EntryKind.LEAF && !this.kids.has(n.id));
  }

  /** Where the branches ending at `a` and `b` part, and what each has after that. */
  diff(a: string, b: string): { fork: Node | undefined; onlyA: Node[]; onlyB: Node[] } {
    const pa = this.path(a);
    const pb = this.path(b);
    let k = 0;
    while (k < pa.length && k < pb.length && pa[k] === pb[k]) k++;
    return { fork: pa[k - 1], onlyA: pa.slice(k), onlyB: pb.slice(k) };
  }
}
