// Creates a session, appends, reads the state, forks and watches a few
// entries. Usage: java -cp <classpath> Example 127.0.0.1:50051
import io.github.sessiond.client.EntryWatch;
import io.github.sessiond.client.Messages;
import io.github.sessiond.client.SessiondClient;
import io.github.sessiond.client.SessiondException;
import io.github.sessiond.v1.AppendRequest;
import io.github.sessiond.v1.AppendResponse;
import io.github.sessiond.v1.CreateSessionRequest;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.ForkSessionRequest;
import io.github.sessiond.v1.GetSessionRequest;
import io.github.sessiond.v1.GetStateRequest;
import io.github.sessiond.v1.StateMessage;
import io.github.sessiond.v1.WatchEntriesRequest;
import io.github.sessiond.v1.WatchEntriesResponse;
import io.grpc.StatusRuntimeException;

public class Example {
  public static void main(String[] args) {
    // + .token(t) on the builder when the server wants one, .tls(caPem) for TLS
    try (SessiondClient c = SessiondClient.builder(args[0]).build()) {
      String id = c.store().createSession(CreateSessionRequest.getDefaultInstance()).getSession().getId();
      // The entry ids are chosen by the client before sending: a retried Append is stored once.
      AppendResponse r = c.session().append(AppendRequest.newBuilder().setSession(id)
          .addEntries(Messages.userMessage("What is 2+2?"))
          .addEntries(Messages.assistantMessage("4"))
          .build());
      for (StateMessage m : c.readState(GetStateRequest.newBuilder().setSession(id).build())
          .getState().getMessagesList()) {
        System.out.println(m.getMessage().getRole() + ": " + Messages.textOf(m));
      }
      String fork = c.store().forkSession(ForkSessionRequest.newBuilder().setSession(id).build())
          .getSession().getId();
      System.out.println("forked " + id + " -> " + fork);
      // Every entry from after_seq on, then live ones; resumes by itself after a disconnect.
      try (EntryWatch w = c.watchEntries(WatchEntriesRequest.newBuilder().setSession(id).build())) {
        while (w.lastSeq() < r.getHeadSeq()) {
          WatchEntriesResponse ev = w.next(); // an entry or a heartbeat
          if (ev.hasEntry()) {
            Entry e = ev.getEntry();
            System.out.println("seq " + e.getSeq() + ": " + e.getId() + " " + Messages.textOf(e));
          }
        }
      }
      try {
        c.store().getSession(GetSessionRequest.newBuilder().setSession("gone-" + id).build());
      } catch (StatusRuntimeException e) {
        SessiondException err = SessiondException.from(e); // the gRPC code and the server's message
        System.out.println(err.code() + ": " + err.serverMessage());
      }
    }
  }
}
