package io.github.sessiond.client;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.github.sessiond.v1.GetEntriesRequest;
import io.github.sessiond.v1.GetEntriesResponse;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.GetStateResponse;
import io.github.sessiond.v1.ListSessionsRequest;
import io.github.sessiond.v1.ListSessionsResponse;
import io.github.sessiond.v1.SessionServiceGrpc;
import io.github.sessiond.v1.StoreServiceGrpc;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.github.sessiond.v1.WatchEntriesResponse;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The Java runner of the client conformance vectors (conformance/README.md):
 * runs every {@code *.json} of CONFORMANCE_VECTORS in name order against
 * SESSIOND_ADDR through {@link SessiondClient} (ids chosen before send, the
 * retry, the resumable watch, the paging helper), writes the results to
 * CONFORMANCE_OUT and exits 0 when every vector passed, 1 otherwise.
 * {@code clients/java/run-conformance.sh} runs it.
 */
public final class ConformanceRunner {
  private static final Gson GSON = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create();
  private static final JsonFormat.Parser PARSER = JsonFormat.parser(); // strict: unknown fields fail
  private static final JsonFormat.Printer PRINTER = JsonFormat.printer(); // defaults left out
  private static final Pattern WHOLE = Pattern.compile("^\\$\\{([A-Za-z0-9_.-]+)\\}$");
  private static final Pattern PART = Pattern.compile("\\$\\{([A-Za-z0-9_.-]+)\\}");
  private static final List<String> KINDS =
      List.of("call", "readState", "readAll", "watch", "watchNext", "watchClose", "restartServer");
  private static final Duration WATCH_WAIT = Duration.ofSeconds(30);
  private static final Duration RESTART_WAIT = Duration.ofSeconds(60);

  /** A step that did not do what the vector says. */
  static final class StepFailure extends Exception {
    private static final long serialVersionUID = 1L;

    StepFailure(String message) {
      super(message);
    }
  }

  private final SessiondClient client;
  private final String workspace;
  private final RestartHandshake restart;
  private final JsonObject states = new JsonObject();

  ConformanceRunner(SessiondClient client, String workspace, RestartHandshake restart) {
    this.client = client;
    this.workspace = workspace;
    this.restart = restart;
  }

  public static void main(String[] args) throws IOException {
    String addr = required("SESSIOND_ADDR");
    Path vectors = Path.of(required("CONFORMANCE_VECTORS"));
    String workspace = required("CONFORMANCE_WORKSPACE");
    Path out = Path.of(required("CONFORMANCE_OUT"));

    JsonObject results = new JsonObject();
    results.addProperty("runner", "java");
    JsonArray done = new JsonArray();
    results.add("vectors", done);
    boolean allPassed = true;
    List<Path> files;
    try (Stream<Path> s = Files.list(vectors)) {
      files = s.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
    }
    ConformanceRunner runner;
    try (SessiondClient client = SessiondClient.builder(addr).callTimeout(Duration.ofSeconds(30)).build()) {
      runner = new ConformanceRunner(client, workspace, RestartHandshake.fromEnv());
      for (Path f : files) {
        JsonObject r = runner.runFile(f);
        done.add(r);
        boolean passed = r.get("passed").getAsBoolean();
        allPassed &= passed;
        System.out.println(
            (passed ? "ok   " : "FAIL ")
                + r.get("name").getAsString()
                + (passed
                    ? " (" + r.get("steps").getAsInt() + " steps)"
                    : ": step " + r.get("failedStep") + ": " + r.get("error").getAsString()));
      }
      results.add("states", runner.states);
    } finally {
      if (!results.has("states")) {
        results.add("states", new JsonObject());
      }
      Files.writeString(out, GSON.toJson(results) + "\n", StandardCharsets.UTF_8);
    }
    System.out.flush();
    System.exit(allPassed && !files.isEmpty() ? 0 : 1);
  }

  private static String required(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      System.err.println("conformance runner: " + name + " is not set (see conformance/README.md)");
      System.exit(1);
    }
    return v;
  }

  /** Runs one vector file; its result object, whatever happened. */
  JsonObject runFile(Path file) {
    JsonObject r = new JsonObject();
    String fallback = file.getFileName().toString().replaceFirst("\\.json$", "");
    JsonObject vector;
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      vector = JsonParser.parseReader(in).getAsJsonObject();
    } catch (IOException | RuntimeException e) {
      r.addProperty("name", fallback);
      r.addProperty("steps", 0);
      r.addProperty("passed", false);
      r.addProperty("failedStep", 0);
      r.addProperty("error", "cannot read the vector: " + e.getMessage());
      return r;
    }
    String name = vector.has("name") ? vector.get("name").getAsString() : fallback;
    JsonArray steps = vector.has("steps") ? vector.getAsJsonArray("steps") : new JsonArray();
    r.addProperty("name", name);
    r.addProperty("steps", steps.size());
    Map<String, JsonElement> vars = new HashMap<>();
    vars.put("ws", new JsonPrimitive(workspace));
    Map<String, EntryWatch> watches = new HashMap<>();
    try {
      for (int i = 0; i < steps.size(); i++) {
        try {
          JsonObject step = substitute(steps.get(i), vars).getAsJsonObject();
          runStep(name, step, vars, watches);
        } catch (StepFailure e) {
          return failed(r, i + 1, e.getMessage());
        } catch (StatusRuntimeException e) {
          SessiondException se = SessiondException.from(e);
          return failed(r, i + 1, "call failed: " + se.code() + ": " + se.serverMessage());
        } catch (Exception e) {
          return failed(r, i + 1, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
      }
    } finally {
      for (EntryWatch w : watches.values()) {
        w.close();
      }
    }
    r.addProperty("passed", true);
    return r;
  }

  private static JsonObject failed(JsonObject r, int step, String error) {
    r.addProperty("passed", false);
    r.addProperty("failedStep", step);
    r.addProperty("error", error);
    return r;
  }

  private void runStep(
      String vector, JsonObject step, Map<String, JsonElement> vars, Map<String, EntryWatch> watches)
      throws Exception {
    List<String> kinds = KINDS.stream().filter(step::has).toList();
    if (kinds.size() != 1) {
      throw new StepFailure("a step needs exactly one of " + KINDS + ", has " + step.keySet());
    }
    switch (kinds.get(0)) {
      case "call" -> call(vector, step, vars);
      case "readState" -> readState(vector, step, vars);
      case "readAll" -> readAll(step);
      case "watch" -> {
        String name = step.get("watch").getAsString();
        WatchEntriesRequest req = parse(step, WatchEntriesRequest.newBuilder());
        EntryWatch old = watches.put(name, client.watchEntries(req));
        if (old != null) {
          old.close();
        }
      }
      case "watchNext" -> watchNext(step, watches);
      case "watchClose" -> {
        EntryWatch w = watches.remove(step.get("watchClose").getAsString());
        if (w == null) {
          throw new StepFailure("no open watch named " + step.get("watchClose"));
        }
        w.close();
      }
      case "restartServer" -> {
        if (restart == null) {
          throw new StepFailure("no restart handshake (SESSIOND_RESTART_DIR is not set)");
        }
        restart.restart(RESTART_WAIT);
      }
      default -> throw new IllegalStateException(kinds.get(0));
    }
  }

  /** A unary call through the client: ids filled before send, retried on UNAVAILABLE. */
  private void call(String vector, JsonObject step, Map<String, JsonElement> vars) throws Exception {
    MethodDescriptor<?, ?> method = method(step.get("call").getAsString());
    if (!(method.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<?> pm)
        || !(pm.getMessagePrototype() instanceof Message prototype)) {
      throw new StepFailure("not a protobuf method: " + method.getFullMethodName());
    }
    // The ids are chosen once, as the client does before its first attempt:
    // `repeat` resends this very request (a retry with the same ids).
    Message req = Ids.fill(parse(step, prototype.newBuilderForType()));
    int repeat = step.has("repeat") ? step.get("repeat").getAsInt() : 0;
    Message res = null;
    StatusRuntimeException error = null;
    for (int i = 0; i <= repeat; i++) {
      try {
        res = invoke(method, req);
        error = null;
      } catch (StatusRuntimeException e) {
        error = e;
        res = null;
      }
    }
    outcome(vector, step, vars, res, error);
  }

  private <Q, R> Message invoke(MethodDescriptor<Q, R> method, Message req) {
    Q q = method.parseRequest(req.toByteString().newInput());
    Object r = ClientCalls.blockingUnaryCall(client.channel(), method, CallOptions.DEFAULT, q);
    return (Message) r;
  }

  private void readState(String vector, JsonObject step, Map<String, JsonElement> vars)
      throws Exception {
    GetStateRequest req = parse(step, GetStateRequest.newBuilder());
    GetStateResponse res = null;
    StatusRuntimeException error = null;
    try {
      res = client.readState(req);
    } catch (StatusRuntimeException e) {
      error = e;
    }
    outcome(vector, step, vars, res, error);
  }

  /** Checks a call's answer against expectError / expect, then save and state. */
  private void outcome(
      String vector, JsonObject step, Map<String, JsonElement> vars, Message res, StatusRuntimeException error)
      throws Exception {
    if (step.has("expectError")) {
      String want = step.get("expectError").getAsString();
      if (error == null) {
        throw new StepFailure("expected code " + want + ", got OK");
      }
      SessiondException se = SessiondException.from(error);
      if (!se.code().name().equals(want)) {
        throw new StepFailure("expected code " + want + ", got " + se.code() + ": " + se.serverMessage());
      }
      if (step.has("expectMessageContains")) {
        String part = step.get("expectMessageContains").getAsString();
        if (!se.serverMessage().contains(part)) {
          throw new StepFailure(
              "the " + want + " message \"" + se.serverMessage() + "\" does not contain \"" + part + "\"");
        }
      }
      return;
    }
    if (error != null) {
      throw error;
    }
    JsonElement got = JsonParser.parseString(PRINTER.print(res));
    if (step.has("expect")) {
      match(step.get("expect"), got, "");
    }
    if (step.has("save")) {
      for (Map.Entry<String, JsonElement> e : step.getAsJsonObject("save").entrySet()) {
        vars.put(e.getKey(), at(got, e.getValue().getAsString()));
      }
    }
    if (step.has("state")) {
      if (!(res instanceof GetStateResponse st)) {
        throw new StepFailure("\"state\" on a call that is not GetState");
      }
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      CodedOutputStream out = CodedOutputStream.newInstance(bytes);
      out.useDeterministicSerialization();
      st.getState().writeTo(out);
      out.flush();
      states.addProperty(
          vector + "/" + step.get("state").getAsString(),
          Base64.getEncoder().encodeToString(bytes.toByteArray()));
    }
  }

  /** GetEntries by after_seq or ListSessions by page token, to the end. */
  private void readAll(JsonObject step) throws Exception {
    String what = step.get("readAll").getAsString();
    List<String> ids = new ArrayList<>();
    switch (what) {
      case "SessionService.GetEntries" -> {
        GetEntriesRequest req = parse(step, GetEntriesRequest.newBuilder());
        long after = req.getAfterSeq();
        for (int pages = 0; ; pages++) {
          if (pages > 100_000) {
            throw new StepFailure("GetEntries does not come to an end");
          }
          GetEntriesResponse page = client.session().getEntries(req.toBuilder().setAfterSeq(after).build());
          if (page.getEntriesCount() == 0) {
            break;
          }
          page.getEntriesList().forEach(e -> ids.add(e.getId()));
          after = page.getEntries(page.getEntriesCount() - 1).getSeq();
          if (Long.compareUnsigned(after, page.getHeadSeq()) >= 0) {
            break;
          }
        }
      }
      case "StoreService.ListSessions" -> {
        ListSessionsRequest req = parse(step, ListSessionsRequest.newBuilder());
        String token = req.getPageToken();
        for (int pages = 0; ; pages++) {
          if (pages > 100_000) {
            throw new StepFailure("ListSessions does not come to an end");
          }
          ListSessionsResponse page = client.store().listSessions(req.toBuilder().setPageToken(token).build());
          page.getSessionsList().forEach(s -> ids.add(s.getId()));
          token = page.getNextPageToken();
          if (token.isEmpty()) {
            break;
          }
        }
      }
      default -> throw new StepFailure("readAll of " + what + " is not a thing");
    }
    expectIds(step, ids);
  }

  private void watchNext(JsonObject step, Map<String, EntryWatch> watches) throws Exception {
    String name = step.get("watchNext").getAsString();
    EntryWatch w = watches.get(name);
    if (w == null) {
      throw new StepFailure("no open watch named \"" + name + "\"");
    }
    int want = step.getAsJsonArray("expectIds").size();
    List<String> ids = new ArrayList<>();
    long until = System.nanoTime() + WATCH_WAIT.toNanos();
    while (ids.size() < want) {
      long left = until - System.nanoTime();
      WatchEntriesResponse ev = left > 0 ? w.poll(Duration.ofNanos(left)) : null;
      if (ev == null) {
        throw new StepFailure(
            "watch \"" + name + "\": " + ids.size() + " of " + want + " entries within "
                + WATCH_WAIT.toSeconds() + " s: " + ids);
      }
      if (ev.hasEntry()) {
        ids.add(ev.getEntry().getId());
      }
    }
    expectIds(step, ids);
  }

  private static void expectIds(JsonObject step, List<String> got) throws StepFailure {
    if (!step.has("expectIds")) {
      return;
    }
    List<String> want = new ArrayList<>();
    for (JsonElement e : step.getAsJsonArray("expectIds")) {
      want.add(e.getAsString());
    }
    if (!want.equals(got)) {
      throw new StepFailure("expected ids " + want + ", got " + got);
    }
  }

  /** The unary method "Service.Method" of either service. */
  private static MethodDescriptor<?, ?> method(String call) throws StepFailure {
    String full = "sessiond.v1." + call.replace('.', '/');
    for (ServiceDescriptor s :
        List.of(StoreServiceGrpc.getServiceDescriptor(), SessionServiceGrpc.getServiceDescriptor())) {
      for (MethodDescriptor<?, ?> m : s.getMethods()) {
        if (m.getFullMethodName().equals(full)) {
          if (m.getType() != MethodDescriptor.MethodType.UNARY) {
            throw new StepFailure(call + " is not a unary RPC");
          }
          return m;
        }
      }
    }
    throw new StepFailure("no RPC " + call);
  }

  /** The step's request, parsed strictly from canonical proto JSON into the builder's type. */
  @SuppressWarnings("unchecked") // build() of a builder of T's type gives a T
  private static <T extends Message> T parse(JsonObject step, Message.Builder builder) throws StepFailure {
    if (!step.has("request")) {
      throw new StepFailure("the step has no request");
    }
    try {
      PARSER.merge(GSON.toJson(step.get("request")), builder);
    } catch (InvalidProtocolBufferException e) {
      throw new StepFailure("bad request JSON: " + e.getMessage());
    }
    return (T) builder.build();
  }

  /** Replaces ${name} placeholders: whole strings by the value, parts of strings by its text. */
  static JsonElement substitute(JsonElement e, Map<String, JsonElement> vars) throws StepFailure {
    if (e.isJsonObject()) {
      JsonObject o = new JsonObject();
      for (Map.Entry<String, JsonElement> kv : e.getAsJsonObject().entrySet()) {
        o.add(kv.getKey(), substitute(kv.getValue(), vars));
      }
      return o;
    }
    if (e.isJsonArray()) {
      JsonArray a = new JsonArray();
      for (JsonElement x : e.getAsJsonArray()) {
        a.add(substitute(x, vars));
      }
      return a;
    }
    if (!e.isJsonPrimitive() || !e.getAsJsonPrimitive().isString()) {
      return e;
    }
    String s = e.getAsString();
    Matcher whole = WHOLE.matcher(s);
    if (whole.matches()) {
      return value(vars, whole.group(1)).deepCopy();
    }
    Matcher part = PART.matcher(s);
    StringBuilder out = new StringBuilder();
    while (part.find()) {
      JsonElement v = value(vars, part.group(1));
      String text = v.isJsonPrimitive() ? v.getAsString() : v.toString();
      part.appendReplacement(out, Matcher.quoteReplacement(text));
    }
    part.appendTail(out);
    return new JsonPrimitive(out.toString());
  }

  private static JsonElement value(Map<String, JsonElement> vars, String name) throws StepFailure {
    JsonElement v = vars.get(name);
    if (v == null) {
      throw new StepFailure("${" + name + "} is not a saved value");
    }
    return v;
  }

  /** The value at a dotted path ("session.id", "entries.0.id") of a response's proto JSON. */
  static JsonElement at(JsonElement root, String path) throws StepFailure {
    JsonElement e = root;
    for (String key : path.split("\\.")) {
      if (e != null && e.isJsonObject()) {
        e = e.getAsJsonObject().get(key);
      } else if (e != null && e.isJsonArray() && key.matches("\\d+") && Integer.parseInt(key) < e.getAsJsonArray().size()) {
        e = e.getAsJsonArray().get(Integer.parseInt(key));
      } else {
        e = null;
      }
      if (e == null) {
        throw new StepFailure("save: the response has no " + path + " (" + root + ")");
      }
    }
    return e;
  }

  /** Subset matching of conformance/README.md, "Matching". */
  static void match(JsonElement want, JsonElement got, String path) throws StepFailure {
    String where = path.isEmpty() ? "the response" : path;
    if (got == null) {
      if (isDefault(want)) {
        return;
      }
      throw new StepFailure("expect: " + where + " is missing (expected " + want + ")");
    }
    if (want.isJsonObject()) {
      if (!got.isJsonObject()) {
        throw new StepFailure("expect: " + where + ": expected an object, got " + got);
      }
      for (Map.Entry<String, JsonElement> kv : want.getAsJsonObject().entrySet()) {
        match(kv.getValue(), got.getAsJsonObject().get(kv.getKey()), path.isEmpty() ? kv.getKey() : path + "." + kv.getKey());
      }
      return;
    }
    if (want.isJsonArray()) {
      if (!got.isJsonArray() || got.getAsJsonArray().size() != want.getAsJsonArray().size()) {
        throw new StepFailure("expect: " + where + ": expected " + want + ", got " + got);
      }
      for (int i = 0; i < want.getAsJsonArray().size(); i++) {
        match(want.getAsJsonArray().get(i), got.getAsJsonArray().get(i), path + "." + i);
      }
      return;
    }
    if (!want.equals(got)) {
      throw new StepFailure("expect: " + where + ": expected " + want + ", got " + got);
    }
  }

  /** false, 0, "0", "", [] and {}: what the printers leave out. */
  static boolean isDefault(JsonElement v) {
    if (v == null || v instanceof JsonNull) {
      return false;
    }
    if (v.isJsonObject()) {
      return v.getAsJsonObject().size() == 0;
    }
    if (v.isJsonArray()) {
      return v.getAsJsonArray().size() == 0;
    }
    JsonPrimitive p = v.getAsJsonPrimitive();
    if (p.isBoolean()) {
      return !p.getAsBoolean();
    }
    if (p.isNumber()) {
      return p.getAsDouble() == 0;
    }
    return p.getAsString().isEmpty() || p.getAsString().equals("0");
  }
}
