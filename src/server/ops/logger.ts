/** The levels of `--log-level`, most severe first. */
export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
/** A level of `--log-level`: what a line is, and the least a server writes. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The server's JSON-lines log: one object per line with its `level`,
 * written only at or above the configured level. Request lines are `info`
 * (`error` when the call failed unexpectedly), probe and scrape requests
 * `debug`, so a quiet log still shows every failure.
 */
export class Logger {
  private readonly max: number;

  constructor(
    level: LogLevel,
    private readonly sink: (line: string) => void,
  ) {
    this.max = LOG_LEVELS.indexOf(level);
  }

  /** True when lines of `level` are written: callers skip building the ones that are not. */
  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) <= this.max;
  }

  /**
   * Writes `fields` as one JSON line with its `level` last, when that level
   * is on. The level is spliced into the serialised object rather than
   * spread into a copy of it: a request line is written per call, and the
   * copy was a third of its cost.
   */
  write(level: LogLevel, fields: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    // Fields naming a level of their own: the line's replaces it in place, as a spread does.
    if ("level" in fields) {
      this.sink(JSON.stringify({ ...fields, level }));
      return;
    }
    const json = JSON.stringify(fields);
    const comma = json === "{}" ? "" : ",";
    this.sink(`${json.slice(0, -1)}${comma}"level":"${level}"}`);
  }

  /**
   * `write` for a line object the caller gives away (a request line, made
   * for this call): its level is set on it, last, and it is serialised once.
   */
  writeOwned(level: LogLevel, fields: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    if ("level" in fields) {
      this.write(level, fields);
      return;
    }
    fields.level = level;
    this.sink(JSON.stringify(fields));
  }

  /** A line some component serialised itself (the retention sweeper's), as it is. */
  raw(level: LogLevel, line: string): void {
    if (this.enabled(level)) this.sink(line);
  }
}

let isoMs = Number.NaN;
let iso = "";

/**
 * `new Date().toISOString()`, made once per millisecond (the string's own
 * precision): the time of each request line, where the Date and its
 * formatting cost more than the rest of the line's fields.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    iso = new Date(ms).toISOString();
  }
  return iso;
}
