package io.github.sessiond.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * The restart handshake of conformance/README.md ("Restarts"): to have the
 * server restarted, write an empty {@code restart-<n>.request} into the
 * directory ({@code n} = 1, 2, ... over the process's life) and wait for
 * {@code restart-<n>.done}, which whoever runs the tests writes once the
 * server is back on the same port and data directory.
 */
final class RestartHandshake {
  private static int count;

  private final Path dir;

  private RestartHandshake(Path dir) {
    this.dir = dir;
  }

  /** The handshake of SESSIOND_RESTART_DIR, or null when it is not set. */
  static RestartHandshake fromEnv() {
    String d = System.getenv("SESSIOND_RESTART_DIR");
    return d == null || d.isEmpty() ? null : new RestartHandshake(Path.of(d));
  }

  /** Asks for a restart and waits (at most {@code timeout}) until the server is back. */
  void restart(Duration timeout) throws IOException, InterruptedException, TimeoutException {
    int n;
    synchronized (RestartHandshake.class) {
      n = ++count;
    }
    Files.write(dir.resolve("restart-" + n + ".request"), new byte[0]);
    Path done = dir.resolve("restart-" + n + ".done");
    long until = System.nanoTime() + timeout.toNanos();
    while (!Files.exists(done)) {
      if (System.nanoTime() > until) {
        throw new TimeoutException("restart " + n + " not done within " + timeout.toSeconds() + " s");
      }
      Thread.sleep(50);
    }
  }
}
