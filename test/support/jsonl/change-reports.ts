import { vi } from "vitest";
import { FileChanges } from "../../../src/storage/jsonl/file-changes.js";

/**
 * Each file's change stamp frozen at the first time it is asked for: as if
 * the kernel's report of a change to the file (this engine's own append, or
 * another process's) had not come in yet; it comes through the event loop,
 * later. For vitest files; undone by vi.restoreAllMocks.
 */
export function freezeChangeReports(): void {
  const live = FileChanges.prototype.stamper;
  const frozen = new Map<string, number>();
  vi.spyOn(FileChanges.prototype, "stamper").mockImplementation(function (
    this: FileChanges,
    dir: string,
  ) {
    const now = live.call(this, dir);
    if (now === undefined) return undefined;
    return (id: string) => {
      const key = `${dir}/${id}`;
      if (!frozen.has(key)) frozen.set(key, now(id));
      return frozen.get(key) as number;
    };
  });
  // One file's stamp (a record's lookup) the same way.
  vi.spyOn(FileChanges.prototype, "stamp").mockImplementation(function (
    this: FileChanges,
    dir: string,
    id: string,
  ) {
    return this.stamper(dir)?.(id);
  });
}
