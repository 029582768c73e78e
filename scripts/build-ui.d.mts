/** Builds the web viewer into `outdir` (emptied first); resolves to the file names written. */
export function buildUi(outdir: string): Promise<string[]>;
