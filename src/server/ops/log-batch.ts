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
): (line: string) => void {
  const batch = new LineBatch(write, maxBytes);
  return (line) => batch.add(line);
}

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

  constructor(
    private readonly write: (chunk: string) => void,
    private readonly maxBytes: number,
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
    const text = this.text;
    if (text === "") return;
    this.text = "";
    this.write(text);
  }

  /** An immediate made inside an immediate runs in the next turn, after that turn's native writes. */
  private readonly flushNextTurn = (): void => {
    setImmediate(this.flushNow);
  };

  private readonly flushNow = (): void => {
    if (this.scheduled) this.flush();
  };
}
