/** A user-facing error: printed as one line, exit code 2 (usage) or 1. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
