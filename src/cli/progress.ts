/**
 * The progress line of long operations (import, export, fsck): counts,
 * rate and ETA, redrawn in place on stderr. It exists only on a terminal;
 * when stderr is piped or the output is --json the same calls do nothing,
 * so scripts never have to strip it.
 */

export interface ProgressSnapshot {
  done: number;
  /** Unknown totals print no ETA. */
  total?: number | undefined;
  elapsedMs: number;
  /** What is being counted, e.g. "entries" or "files". */
  unit: string;
}

/** Seconds as m:ss or h:mm:ss. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** A rate with a precision that fits its size: "0.5/s", "12/s", "1,234/s". */
function formatRate(perSecond: number): string {
  if (perSecond < 10) return `${perSecond.toFixed(1)}/s`;
  return `${Math.round(perSecond).toLocaleString("en-US")}/s`;
}

/**
 * "1,200/5,000 entries (24%)  300/s  ETA 0:13". Rate and ETA wait for a
 * little elapsed time, so the first frames do not show nonsense.
 */
export function formatProgress(p: ProgressSnapshot): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const parts: string[] = [];
  if (p.total !== undefined && p.total > 0) {
    const pct = Math.floor((100 * Math.min(p.done, p.total)) / p.total);
    parts.push(`${n(p.done)}/${n(p.total)} ${p.unit} (${pct}%)`);
  } else {
    parts.push(`${n(p.done)} ${p.unit}`);
  }
  const seconds = p.elapsedMs / 1000;
  if (seconds >= 0.2 && p.done > 0) {
    const rate = p.done / seconds;
    parts.push(formatRate(rate));
    if (p.total !== undefined && p.total >= p.done) {
      parts.push(`ETA ${formatDuration((p.total - p.done) / rate)}`);
    }
  }
  return parts.join("  ");
}

const REDRAW_MS = 100;
const CLEAR_LINE = "\r\x1b[2K";

/** A live progress line; a no-op unless constructed with a stream. */
export class Progress {
  private done = 0;
  private lastDraw = 0;
  private drawn = false;
  private readonly started = Date.now();

  constructor(
    private readonly stream: NodeJS.WritableStream | undefined,
    private readonly label: string,
    private readonly unit: string,
    private total?: number,
  ) {}

  setTotal(total: number): void {
    this.total = total;
  }

  /** Counts `n` more items done and redraws at most every 100 ms. */
  advance(n = 1): void {
    this.done += n;
    if (this.stream === undefined) return;
    const now = Date.now();
    if (now - this.lastDraw < REDRAW_MS) return;
    this.lastDraw = now;
    this.draw(now);
  }

  /** Removes the line (before other output, or at the end); a later advance redraws it. */
  clear(): void {
    if (this.stream === undefined || !this.drawn) return;
    this.stream.write(CLEAR_LINE);
    this.drawn = false;
  }

  private draw(now: number): void {
    const text = formatProgress({
      done: this.done,
      total: this.total,
      elapsedMs: now - this.started,
      unit: this.unit,
    });
    (this.stream as NodeJS.WritableStream).write(`${CLEAR_LINE}${this.label} ${text}`);
    this.drawn = true;
  }
}
