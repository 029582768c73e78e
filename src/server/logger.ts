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

  /** Writes `fields` as one JSON line with its `level` last, when that level is on. */
  write(level: LogLevel, fields: Record<string, unknown>): void {
    if (this.enabled(level)) this.sink(JSON.stringify({ ...fields, level }));
  }

  /** A line some component serialised itself (the retention sweeper's), as it is. */
  raw(level: LogLevel, line: string): void {
    if (this.enabled(level)) this.sink(line);
  }
}
