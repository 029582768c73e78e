import {
  type Entry,
  type EntryKind,
  entryKind,
  entryPreview,
  Role,
  type TreeNode,
} from "../web/index.js";

/** One entry as the tree draws it: GetTree's node, or the same made from a watched Entry. */
export interface Node {
  readonly id: string;
  readonly parentId: string | undefined;
  readonly kind: EntryKind;
  readonly seq: number;
  readonly role: Role;
  readonly preview: string;
  readonly time: Date | undefined;
  /** Label entries: the label. */
  readonly label: string | undefined;
  /** Leaf entries: where the leaf moved. */
  readonly leafId: string | undefined;
}

/** A GetTree node. */
export function nodeOfTree(n: TreeNode): Node {
  return {
    id: n.id,
    parentId: n.parentId,
    kind: n.kind,
    seq: Number(n.seq),
    role: n.role,
    preview: n.preview,
    time: n.timestamp === undefined ? undefined : new Date(Number(n.timestamp.seconds) * 1000),
    label: n.label,
    leafId: n.leafId,
  };
}

/** A watched entry as a tree node. */
export function nodeOfEntry(e: Entry): Node {
  const k = e.kind;
  return {
    id: e.id,
    parentId: e.parentId,
    kind: entryKind(e),
    seq: Number(e.seq),
    role: k.case === "message" ? k.value.role : Role.UNSPECIFIED,
    // The server draws GetTree's previews with the same rule.
    preview: entryPreview(e),
    time: e.timestamp === undefined ? undefined : new Date(Number(e.timestamp.seconds) * 1000),
    label: k.case === "label" ? k.value.label : undefined,
    leafId: k.case === "leaf" ? k.value.leafId : undefined,
  };
}
