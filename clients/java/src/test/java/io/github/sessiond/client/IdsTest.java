package io.github.sessiond.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Timestamp;
import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.CreateSessionRequest;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.ForkSessionRequest;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.ImportSessionRequest;
import io.github.sessiond.v1.ResetRequest;
import io.github.sessiond.v1.RewindRequest;
import io.github.sessiond.v1.SessionInfo;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class IdsTest {
  static final Pattern ENTRY_ID = Pattern.compile("[0-9a-f]{16}");
  static final Pattern SESSION_ID = Pattern.compile("\\d{8}-\\d{6}-[0-9a-f]{8}");

  @Test
  void entryIdsAre16HexAndRandom() {
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      String id = Ids.newEntryId();
      assertTrue(ENTRY_ID.matcher(id).matches(), id);
      seen.add(id);
    }
    assertEquals(1000, seen.size());
  }

  @Test
  void sessionIdsAreUtcTimestampAndHex() {
    String id = Ids.newSessionId(Instant.parse("2026-12-01T23:09:43.5Z"));
    assertTrue(id.startsWith("20261201-230943-"), id);
    assertTrue(SESSION_ID.matcher(id).matches(), id);
    assertTrue(SESSION_ID.matcher(Ids.newSessionId()).matches());
    assertNotEquals(Ids.newSessionId(), Ids.newSessionId());
  }

  @Test
  void fillSetsOnlyWhatIsUnset() {
    AppendRequest app =
        AppendRequest.newBuilder()
            .setSession("s")
            .addEntries(Messages.userMessage("a"))
            .addEntries(Messages.userMessage("b").toBuilder().setId("mine"))
            .build();
    AppendRequest filled = Ids.fill(app);
    assertTrue(ENTRY_ID.matcher(filled.getEntries(0).getId()).matches());
    assertEquals("mine", filled.getEntries(1).getId());
    assertEquals("", app.getEntries(0).getId(), "the caller's request is immutable");
    assertSame(filled, Ids.fill(filled), "nothing left to fill: the same request");

    RewindRequest rw = Ids.fill(RewindRequest.newBuilder().setTarget("x").build());
    assertTrue(ENTRY_ID.matcher(rw.getEntryId()).matches());
    RewindRequest explicitEmpty = RewindRequest.newBuilder().setEntryId("").build();
    assertSame(explicitEmpty, Ids.fill(explicitEmpty), "an explicit empty optional is kept");
    assertTrue(ENTRY_ID.matcher(Ids.fill(ResetRequest.getDefaultInstance()).getEntryId()).matches());
    assertEquals("lf", Ids.fill(ResetRequest.newBuilder().setEntryId("lf").build()).getEntryId());

    assertTrue(
        SESSION_ID.matcher(Ids.fill(CreateSessionRequest.getDefaultInstance()).getSessionId()).matches());
    assertEquals(
        "given", Ids.fill(CreateSessionRequest.newBuilder().setSessionId("given").build()).getSessionId());
    assertTrue(
        SESSION_ID.matcher(Ids.fill(ForkSessionRequest.getDefaultInstance()).getSessionId()).matches());

    GetStateRequest other = GetStateRequest.newBuilder().setSession("s").build();
    assertSame(other, Ids.fill(other), "other requests pass unchanged");
  }

  @Test
  void fillOfAnImportKeepsTheRecordedSessionIdAndFillsEntries() {
    Timestamp t = Timestamp.newBuilder().setSeconds(1_700_000_000).build();
    ImportSessionRequest imp =
        ImportSessionRequest.newBuilder()
            .addEntries(
                Entry.newBuilder()
                    .setId("root")
                    .setTimestamp(t)
                    .setSessionInfo(SessionInfo.newBuilder().setSessionId("recorded-id")))
            .addEntries(Messages.userMessage("hi"))
            .build();
    ImportSessionRequest filled = Ids.fill(imp);
    assertEquals("recorded-id", filled.getSessionId());
    assertEquals("root", filled.getEntries(0).getId());
    assertEquals(t, filled.getEntries(0).getTimestamp());
    assertTrue(ENTRY_ID.matcher(filled.getEntries(1).getId()).matches());
    assertTrue(filled.getEntries(1).hasTimestamp());
    assertSame(filled, Ids.fill(filled));

    ImportSessionRequest anonymous =
        Ids.fill(
            ImportSessionRequest.newBuilder()
                .addEntries(Entry.newBuilder().setSessionInfo(SessionInfo.getDefaultInstance()))
                .build());
    assertTrue(SESSION_ID.matcher(anonymous.getSessionId()).matches());
    assertEquals(
        "explicit",
        Ids.fill(imp.toBuilder().setSessionId("explicit").build()).getSessionId());
  }
}
