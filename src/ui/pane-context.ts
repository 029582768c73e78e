import type { EntryLink } from "./entry-view.js";
import type { TreeModel } from "./tree-model.js";

/**
 * What the pane needs of its session view. The tree may still be loading
 * when the pane opens, so what needs the whole tree is asked for as a
 * promise: the pane draws its own entry (read by id) without it.
 */
export interface PaneContext {
  readonly workspace: string;
  readonly session: string;
  readonly model: TreeModel;
  readonly link: EntryLink;
  readonly sessionLink: (id: string) => HTMLElement;
  readonly onError: (err: unknown, into: HTMLElement) => void;
  /** Resolves when the whole tree is loaded (branch tips need all of it). */
  readonly complete: Promise<void>;
  /** Runs a read the user waits for ahead of the tree's next page. */
  readonly readFirst: <T>(read: () => Promise<T>) => Promise<T>;
}
