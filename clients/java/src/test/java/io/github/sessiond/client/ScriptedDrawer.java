package io.github.sessiond.client;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * A session id drawer for {@link SessiondClient.Builder#sessionIds}: the ids
 * it was given first, in order, then the last of them again ({@link #always})
 * or fresh ones from {@link Ids#newSessionId()}. It records every id drawn.
 */
final class ScriptedDrawer implements Supplier<String> {
  private final List<String> script;
  private final boolean repeatLast;
  private final List<String> drawn = new ArrayList<>();

  private ScriptedDrawer(List<String> script, boolean repeatLast) {
    this.script = script;
    this.repeatLast = repeatLast;
  }

  /** {@code ids} first, then fresh ids. */
  static ScriptedDrawer first(String... ids) {
    return new ScriptedDrawer(List.of(ids), false);
  }

  /** {@code id} on every draw. */
  static ScriptedDrawer always(String id) {
    return new ScriptedDrawer(List.of(id), true);
  }

  @Override
  public synchronized String get() {
    int n = drawn.size();
    String id =
        n < script.size() ? script.get(n) : repeatLast ? script.get(script.size() - 1) : Ids.newSessionId();
    drawn.add(id);
    return id;
  }

  /** The ids drawn so far, in order. */
  synchronized List<String> drawn() {
    return List.copyOf(drawn);
  }
}
