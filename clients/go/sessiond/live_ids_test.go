package sessiond

// Session ids drawn again against a live server (see live_test.go for how
// it is named): a drawn id that is another session's, the retry of a
// create whose answer was lost, a caller's own id, the bound of 8 draws.
// drawing (ids_test.go) makes the first draw the id of a session that exists.

import (
	"testing"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// takenSession creates a session with a title (to tell other parameters
// apart) and one appended entry, and returns a check that it is unchanged.
func takenSession(t *testing.T, c *Client, title string) (string, func(after string)) {
	t.Helper()
	res, err := c.Store.CreateSession(ctxFor(t), &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &title})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Session.Id
	if _, err := c.Session.Append(ctxFor(t), &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{UserText("mine")}}); err != nil {
		t.Fatal(err)
	}
	return id, unchangedSession(t, c, id)
}

// unchangedSession returns a check that session id is as it is now.
func unchangedSession(t *testing.T, c *Client, id string) func(after string) {
	t.Helper()
	read := func() (*sessiondv1.SessionMeta, *sessiondv1.GetEntriesResponse) {
		t.Helper()
		ctx := ctxFor(t)
		got, err := c.Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: id})
		if err != nil {
			t.Fatal(err)
		}
		ents, err := c.Session.GetEntries(ctx, &sessiondv1.GetEntriesRequest{Workspace: workspace, Session: id})
		if err != nil {
			t.Fatal(err)
		}
		return got.Session, ents
	}
	meta, ents := read()
	return func(after string) {
		t.Helper()
		meta2, ents2 := read()
		if !proto.Equal(meta, meta2) || !proto.Equal(ents, ents2) {
			t.Fatalf("after %s, the session under the taken id changed:\n%v\n%v\nwas\n%v\n%v", after, meta2, ents2, meta, ents)
		}
	}
}

// importable is a log to import whose root records no session id.
func importable() []*sessiondv1.Entry {
	root := &sessiondv1.Entry{Id: NewEntryID(), Kind: &sessiondv1.Entry_SessionInfo{SessionInfo: &sessiondv1.SessionInfo{}}}
	msg := UserText("imported")
	msg.Id = NewEntryID()
	msg.ParentId = &root.Id
	return []*sessiondv1.Entry{root, msg}
}

func TestLiveTakenSessionIDIsDrawnAgain(t *testing.T) {
	for name, c := range map[string]*Client{"with retry": live(t), "without retry": live(t, WithoutRetry())} {
		ctx := ctxFor(t)
		title := "taken"
		taken, unchanged := takenSession(t, c, title)
		newOne := func(what, id, sent string, created bool) {
			t.Helper()
			if !created || id == taken || id != sent || !sessionIDForm.MatchString(id) {
				t.Fatalf("%s, %s: session %q created=%v (request's id %q); want a new session, not %q", what, name, id, created, sent, taken)
			}
			unchanged(what + ", " + name)
		}

		// With the parameters of the taken session (the server answers
		// created=false) and with others (ALREADY_EXISTS).
		drawing(t, taken)
		same := &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &title}
		res, err := c.Store.CreateSession(ctx, same)
		if err != nil {
			t.Fatal(err)
		}
		newOne("create, equal parameters", res.Session.Id, same.GetSessionId(), res.Created)

		drawing(t, taken)
		otherTitle := "another"
		diff := &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &otherTitle}
		if res, err = c.Store.CreateSession(ctx, diff); err != nil {
			t.Fatal(err)
		}
		newOne("create, other parameters", res.Session.Id, diff.GetSessionId(), res.Created)

		drawing(t, taken)
		fork := &sessiondv1.ForkSessionRequest{Workspace: workspace, Session: res.Session.Id}
		forked, err := c.Store.ForkSession(ctx, fork)
		if err != nil {
			t.Fatal(err)
		}
		newOne("fork", forked.Session.Id, fork.GetSessionId(), forked.Session.GetForkedFrom().GetSessionId() == res.Session.Id)

		drawing(t, taken)
		imp := &sessiondv1.ImportSessionRequest{Workspace: workspace, Entries: importable()}
		imported, err := c.Store.ImportSession(ctx, imp)
		if err != nil {
			t.Fatal(err)
		}
		newOne("import, another log", imported.Session.Id, imp.GetSessionId(), imported.Created)
		if imported.Session.EntryCount != 2 {
			t.Fatalf("import, %s: %v", name, imported.Session)
		}

		// The same log (its ids and timestamps filled in by the import
		// above) under the id of the session it made: created=false.
		taken, unchanged = imported.Session.Id, unchangedSession(t, c, imported.Session.Id)
		drawing(t, taken)
		again := &sessiondv1.ImportSessionRequest{Workspace: workspace, Entries: imp.Entries}
		if imported, err = c.Store.ImportSession(ctx, again); err != nil {
			t.Fatal(err)
		}
		newOne("import, the same log", imported.Session.Id, again.GetSessionId(), imported.Created)
	}
}

func TestLiveCreateRetriedAfterLostReplyIsNotDrawnAgain(t *testing.T) {
	const method = "/sessiond.v1.StoreService/CreateSession"
	fast := WithRetry(5, 10*time.Millisecond, 50*time.Millisecond)
	ctx := ctxFor(t)

	// The server creates the session; its answer is lost; the retry answers
	// created=false: this call's own session, returned.
	probe := &attempts{method: method, plan: []string{"lose"}}
	c := live(t, WithUnaryInterceptors(probe.interceptor), fast)
	draws := drawing(t)
	req := &sessiondv1.CreateSessionRequest{Workspace: workspace}
	res, err := c.Store.CreateSession(ctx, req)
	if err != nil || res.Created || res.Session.Id != req.GetSessionId() || probe.n != 2 || *draws != 1 {
		t.Fatalf("create after a lost answer: %v, %v (request's id %q) after %d attempts, %d draws; want created=false, the same id, 2 attempts, 1 draw", res, err, req.GetSessionId(), probe.n, *draws)
	}
	if _, err := c.Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: res.Session.Id}); err != nil {
		t.Fatal(err)
	}

	// Control: an attempt refused before it reached the server, then
	// created=false for a taken id: another's session, drawn again.
	title := "taken"
	taken, unchanged := takenSession(t, c, title)
	probe = &attempts{method: method, plan: []string{"refuse"}}
	c = live(t, WithUnaryInterceptors(probe.interceptor), fast)
	draws = drawing(t, taken)
	req = &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &title}
	res, err = c.Store.CreateSession(ctx, req)
	if err != nil || !res.Created || res.Session.Id == taken || res.Session.Id != req.GetSessionId() || probe.n != 3 || *draws != 2 {
		t.Fatalf("create refused, then answered created=false for a taken id: %v, %v after %d attempts, %d draws; want a new session, 3 attempts, 2 draws", res, err, probe.n, *draws)
	}
	unchanged("the refused create")
}

func TestLiveCallersTakenSessionIDIsNotDrawnAgain(t *testing.T) {
	c := live(t)
	ctx := ctxFor(t)
	title := "taken"
	taken, unchanged := takenSession(t, c, title)
	draws := drawing(t)

	given := taken
	res, err := c.Store.CreateSession(ctx, &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &title, SessionId: &given})
	if err != nil || res.Created || res.Session.Id != taken {
		t.Fatalf("the caller's taken id, equal parameters: %v, %v; want created=false and that session", res, err)
	}
	otherTitle := "another"
	_, err = c.Store.CreateSession(ctx, &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &otherTitle, SessionId: &given})
	wantCode(t, err, codes.AlreadyExists, "the caller's taken id, other parameters")
	_, err = c.Store.ForkSession(ctx, &sessiondv1.ForkSessionRequest{Workspace: workspace, Session: taken, SessionId: &given})
	wantCode(t, err, codes.AlreadyExists, "a fork under the caller's taken id")
	recorded := importable()
	recorded[0].GetSessionInfo().SessionId = taken
	_, err = c.Store.ImportSession(ctx, &sessiondv1.ImportSessionRequest{Workspace: workspace, Entries: recorded})
	wantCode(t, err, codes.AlreadyExists, "an import whose root records the taken id")
	if *draws != 0 {
		t.Fatalf("%d session ids drawn for requests that had theirs", *draws)
	}
	unchanged("the caller's own ids")

	// Control: the same create without an id, its first draw the taken id.
	draws = drawing(t, taken)
	req := &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &otherTitle}
	if res, err = c.Store.CreateSession(ctx, req); err != nil || !res.Created || res.Session.Id == taken || *draws != 2 {
		t.Fatalf("control: %v, %v after %d draws; want a new session", res, err, *draws)
	}
}

func TestLiveSessionIDDrawsStopAfterEight(t *testing.T) {
	probe := &attempts{method: "/sessiond.v1.StoreService/CreateSession"}
	c := live(t, WithUnaryInterceptors(probe.interceptor))
	ctx := ctxFor(t)
	title := "taken"
	taken, unchanged := takenSession(t, c, title)
	always := make([]string, 20)
	for i := range always {
		always[i] = taken
	}

	probe.n = 0
	draws := drawing(t, always...)
	otherTitle := "another"
	_, err := c.Store.CreateSession(ctx, &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &otherTitle})
	wantCode(t, err, codes.AlreadyExists, "the 8th draw of a taken id, other parameters")
	if probe.n != 8 || *draws != 8 {
		t.Fatalf("other parameters: %d attempts, %d draws; want 8", probe.n, *draws)
	}

	probe.n = 0
	draws = drawing(t, always...)
	res, err := c.Store.CreateSession(ctx, &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &title})
	if err != nil || res.Created || res.Session.Id != taken || probe.n != 8 || *draws != 8 {
		t.Fatalf("equal parameters: %v, %v after %d attempts, %d draws; want the 8th answer as it is (created=false), 8 attempts", res, err, probe.n, *draws)
	}
	unchanged("8 draws of its id")
}
