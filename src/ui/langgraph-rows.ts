import { type Entry, EntryKind } from "../web/index.js";
import {
  CHECKPOINT_NAMESPACE,
  type LangGraphEntry,
  langGraphEntry,
  type RowLabel,
  rowLabel,
  WRITES_NAMESPACE,
} from "./langgraph.js";
import type { Node } from "./tree-node.js";

/** Entries read per GetEntries (by id): a screen of rows and the margin drawn around it. */
const BATCH = 100;

/**
 * The LangGraph labels of the tree's rows. GetTree gives a Custom entry's
 * namespace only, so the checkpoints and writes among the rows drawn are
 * read by id (a batch per GetEntries, only rows that were drawn: the tree
 * stays virtualised) and the rows drawn again when they arrive. Watched
 * entries come whole and are taken as they are. An entry whose data is
 * neither saver's shape, or whose read failed, keeps the ordinary row.
 */
export class LangGraphRows {
  private readonly known = new Map<string, LangGraphEntry | null>();
  private readonly queued = new Set<string>();
  private flushing = false;

  constructor(
    private readonly read: (ids: string[]) => Promise<Entry[]>,
    private readonly arrived: () => void,
  ) {}

  /** The row's label: undefined for other entries, and while its entry is read. */
  label(n: Node): RowLabel | undefined {
    if (!maybeLangGraph(n)) return undefined;
    const k = this.known.get(n.id);
    if (k === undefined) {
      this.queue(n.id);
      return undefined;
    }
    return k === null ? undefined : rowLabel(k);
  }

  /** An entry read whole (a watched one): no read for its row. */
  take(e: Entry): void {
    if (e.kind.case !== "custom") return;
    this.known.set(e.id, langGraphEntry(e.kind.value.namespace, e.kind.value.data) ?? null);
  }

  private queue(id: string): void {
    if (this.queued.has(id)) return;
    this.queued.add(id);
    if (this.flushing) return;
    this.flushing = true;
    // After the current draw: every row of it joins the batch.
    setTimeout(() => void this.flush(), 0);
  }

  private async flush(): Promise<void> {
    try {
      while (this.queued.size > 0) {
        const ids = [...this.queued].slice(0, BATCH);
        for (const id of ids) this.queued.delete(id);
        let entries: Entry[] = [];
        try {
          entries = await this.read(ids);
        } catch {
          // Drawn as ordinary Custom entries (the pane says what failed when one is opened).
        }
        for (const e of entries) this.take(e);
        // A page cut short by max_response_bytes leaves some out: read those again.
        for (const id of ids) {
          if (this.known.has(id)) continue;
          if (entries.length > 0) this.queued.add(id);
          else this.known.set(id, null);
        }
        this.arrived();
      }
    } finally {
      this.flushing = false;
    }
  }
}

/** GetTree's preview of a Custom entry is its namespace. */
function maybeLangGraph(n: Node): boolean {
  return (
    n.kind === EntryKind.CUSTOM &&
    (n.preview === CHECKPOINT_NAMESPACE || n.preview === WRITES_NAMESPACE)
  );
}
