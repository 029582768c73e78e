/**
 * A log sink that writes the lines of one turn of the event loop in one
 * write. Why: the server's stderr is synchronous on a pipe, a file or a
 * terminal, and one write per request line cost more server CPU than
 * anything else in a warm GetSession over native gRPC (a system call and a
 * wake-up of the reader per line: ~35 µs of ~130 µs, profiled at 64 calls
 * in flight). Batched, the lines of a burst of calls share one system call;
 * each request still has its own line, in the order the calls ended.
 *
 * A batch goes out in the turn of the event loop after the one its first
 * line was added in (a `setImmediate` that schedules another), as soon as
 * it reaches `maxBytes`, and at process exit (also after an uncaught error:
 * Node runs 'exit' listeners before it exits), so only SIGKILL within two
 * turns loses lines. Why the second turn: a native gRPC call's line is
 * made when grpc-js hands over its trailers, which HTTP/2 writes to the
 * socket in the next turn; a write to stderr (and the wake-up of its reader)
 * in between delays the call's answer, after the trailers it does not.
 */
export function batchedLines(
  write: (chunk: string) => void,
  maxBytes = 64 * 1024,
  /**
   * At most one write per this many ms (0: none): a batch due sooner after
   * the previous write waits for the rest of it. A quiet server's line
   * goes out as before (its previous write is long past); a busy one's
   * lines of many turns share a write, and its reader wakes up once per
   * `spacingMs` instead of once per turn. See SERVER_LOG_SPACING_MS.
   */
  spacingMs = 0,
  clock: () => number = () => performance.now(),
): (line: string) => void {
  const batch = new LineBatch(write, maxBytes, spacingMs, clock);
  return (line) => batch.add(line);
}

/**
 * The server's request log spacing (batchedLines `spacingMs`). Why: with 64
 * appends in flight the server's event loop turns over once per one or two
 * answers, so its stderr got a write (a system call, and a wake-up of the
 * process reading it) per ~2 calls: ~8 µs of CPU per call in the reading
 * process (a Node parent keeping the log's tail) and ~2 µs in the server,
 * on a 2-core box (2026-12-06, bench g2's load). Spaced by 10 ms a busy
 * server writes ~100 times a second; a line waits at most that long, and
 * SIGKILL loses at most that much more of the log (exit still writes it).
 */
export const SERVER_LOG_SPACING_MS = 10;

/** Batches with lines waiting, flushed at exit: one 'exit' listener for all of them. */
const waiting = new Set<LineBatch>();
let exitHooked = false;
/** The process is exiting: no later turn will come, so a line added now is written at once. */
let exiting = false;

function flushAll(): void {
  exiting = true;
  for (const b of waiting) b.flush();
}

class LineBatch {
  private text = "";
  private scheduled = false;
  /** When the last write went out (clock ms). */
  private wroteAt = Number.NEGATIVE_INFINITY;
  private spacer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (chunk: string) => void,
    private readonly maxBytes: number,
    private readonly spacingMs: number,
    private readonly clock: () => number,
  ) {}

  add(line: string): void {
    this.text += `${line}\n`;
    if (this.text.length >= this.maxBytes || exiting) {
      this.flush();
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    waiting.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.once("exit", flushAll);
    }
    setImmediate(this.flushNextTurn);
  }

  flush(): void {
    this.scheduled = false;
    waiting.delete(this);
    if (this.spacer !== undefined) {
      clearTimeout(this.spacer);
      this.spacer = undefined;
    }
    const text = this.text;
    if (text === "") return;
    this.text = "";
    if (this.spacingMs > 0) this.wroteAt = this.clock();
    this.write(text);
  }

  /** An immediate made inside an immediate runs in the next turn, after that turn's native writes. */
  private readonly flushNextTurn = (): void => {
    setImmediate(this.flushNow);
  };

  private readonly flushNow = (): void => {
    if (!this.scheduled || this.spacer !== undefined) return;
    const wait = this.wroteAt + this.spacingMs - this.clock();
    if (wait <= 0 || exiting) {
      this.flush();
      return;
    }
    // Unref'd: at exit the 'exit' listener writes what waits.
    this.spacer = setTimeout(this.flushSpaced, wait);
    this.spacer.unref();
  };

  private readonly flushSpaced = (): void => {
    this.spacer = undefined;
    if (this.scheduled) this.flush();
  };
}
