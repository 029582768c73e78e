package sessiond

// Tests against a live sessiond server. SESSIOND_ADDR (host:port) names it;
// SESSIOND_TOKEN is sent when set; SESSIOND_WORKSPACE picks the workspace
// (default: a fresh one per run). Without SESSIOND_ADDR they are skipped,
// loudly. test/integration/go-client.test.ts runs them against a server it
// starts (and restarts, for TestLiveWatchResumesAcrossRestart).

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

var workspace = func() string {
	if ws := os.Getenv("SESSIOND_WORKSPACE"); ws != "" {
		return ws
	}
	return "go-" + NewEntryID()
}()

func TestMain(m *testing.M) {
	if os.Getenv("SESSIOND_ADDR") == "" {
		fmt.Fprintln(os.Stderr, "\n*** SESSIOND_ADDR is not set: every TestLive* test is SKIPPED (start `node bin/sessiond.js serve` and set SESSIOND_ADDR=host:port) ***")
	}
	os.Exit(m.Run())
}

// live dials the server under test, or skips the test loudly.
func live(t *testing.T, opts ...Option) *Client {
	t.Helper()
	addr := os.Getenv("SESSIOND_ADDR")
	if addr == "" {
		t.Skip("*** SKIPPED: SESSIOND_ADDR is not set (no live server) ***")
	}
	if tok := os.Getenv("SESSIOND_TOKEN"); tok != "" {
		opts = append(opts, WithToken(tok))
	}
	c, err := Dial(context.Background(), addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newSession(t *testing.T, c *Client) string {
	t.Helper()
	res, err := c.Store.CreateSession(ctxFor(t), &sessiondv1.CreateSessionRequest{Workspace: workspace})
	if err != nil {
		t.Fatal(err)
	}
	return res.Session.Id
}

func wantCode(t *testing.T, err error, want codes.Code, what string) {
	t.Helper()
	if status.Code(err) != want {
		t.Fatalf("%s: got %v (code %v), want %v", what, err, status.Code(err), want)
	}
	if want != codes.OK && status.Convert(err).Message() == "" {
		t.Fatalf("%s: %v has no message from the server", what, want)
	}
}

// attempts is a test interceptor (inside ids and retry, once per attempt)
// that counts attempts of one method and can fail some of them: "lose" lets
// the attempt reach the server and then reports UNAVAILABLE, as a reply lost
// with the connection would; "refuse" reports UNAVAILABLE without sending.
type attempts struct {
	method string
	plan   []string
	n      int32
}

func (a *attempts) interceptor(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if method != a.method {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	i := int(atomic.AddInt32(&a.n, 1)) - 1
	step := ""
	if i < len(a.plan) {
		step = a.plan[i]
	}
	switch step {
	case "lose":
		if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "test: reply lost after the server acted")
	case "refuse":
		return status.Error(codes.Unavailable, "test: connection refused")
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func TestLiveStoreServiceEveryRPC(t *testing.T) {
	c := live(t)
	ctx := ctxFor(t)

	// WatchSessions first, so that it sees the create below.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	events, err := c.Store.WatchSessions(wctx, &sessiondv1.WatchSessionsRequest{Workspace: workspace})
	if err != nil {
		t.Fatal(err)
	}

	title := "go client"
	req := &sessiondv1.CreateSessionRequest{Workspace: workspace, Title: &title}
	created, err := c.Store.CreateSession(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	id := created.Session.Id
	if !created.Created || req.GetSessionId() != id || !sessionIDForm.MatchString(id) {
		t.Fatalf("created=%v id=%q, request's id (chosen before send) %q", created.Created, id, req.GetSessionId())
	}
	again, err := c.Store.CreateSession(ctx, req) // same id: an idempotent repeat
	if err != nil || again.Created || again.Session.Id != id {
		t.Fatalf("repeated create: %v, %v", again, err)
	}

	for {
		ev, err := events.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == sessiondv1.SessionEventType_SESSION_EVENT_TYPE_CREATED && ev.SessionId == id {
			break
		}
	}
	stop()

	got, err := c.Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: id[:22]})
	if err != nil || got.Session.Id != id || got.Session.GetTitle() != title {
		t.Fatalf("GetSession by prefix: %v, %v", got, err)
	}

	agent := "helper"
	sub, err := c.Store.CreateSession(ctx, &sessiondv1.CreateSessionRequest{Workspace: workspace, ParentSessionId: &id, AgentType: &agent})
	if err != nil || sub.Session.SpawnDepth != 1 {
		t.Fatalf("subagent: %v, %v", sub, err)
	}
	subs, err := c.Store.ListSessions(ctx, &sessiondv1.ListSessionsRequest{Workspace: workspace, ParentSessionId: &id})
	if err != nil || len(subs.Sessions) != 1 || subs.Sessions[0].Id != sub.Session.Id {
		t.Fatalf("ListSessions of the subagents: %v, %v", subs, err)
	}
	top, err := c.Store.ListSessions(ctx, &sessiondv1.ListSessionsRequest{Workspace: workspace, PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, s := range top.Sessions {
		listed = listed || s.Id == id
	}
	if !listed {
		t.Fatalf("ListSessions does not list %s", id)
	}

	freq := &sessiondv1.ForkSessionRequest{Workspace: workspace, Session: id}
	fork, err := c.Store.ForkSession(ctx, freq)
	if err != nil || fork.Session.Id != freq.GetSessionId() || fork.Session.GetForkedFrom().GetSessionId() != id {
		t.Fatalf("ForkSession: %v, %v (id chosen before send %q)", fork, err, freq.GetSessionId())
	}

	del, err := c.Store.DeleteSession(ctx, &sessiondv1.DeleteSessionRequest{Workspace: workspace, Session: id, IncludeSubagents: true})
	if err != nil || len(del.DeletedSessionIds) != 2 {
		t.Fatalf("DeleteSession with subagents: %v, %v", del, err)
	}
	_, err = c.Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: id})
	wantCode(t, err, codes.NotFound, "GetSession of a deleted session")
	_, err = c.Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: fork.Session.Id})
	wantCode(t, err, codes.OK, "the fork outlives its source")
}

func TestLiveSessionServiceEveryRPC(t *testing.T) {
	c := live(t)
	ctx := ctxFor(t)
	id := newSession(t, c)

	call, err := NewToolCall("call-1", "add", map[string]interface{}{"a": 2, "b": 2})
	if err != nil {
		t.Fatal(err)
	}
	label := &sessiondv1.Entry{Kind: &sessiondv1.Entry_Label{Label: &sessiondv1.Label{Label: "asked"}}}
	app := &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{
		UserText("What is 2+2?"), label, AssistantText("", call), ToolResult("call-1", "add", "4", false), AssistantText("4"),
	}}
	res, err := c.Session.Append(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if res.HeadSeq != 6 || res.LeafId != app.Entries[4].Id || res.Deduplicated {
		t.Fatalf("Append: %v", res)
	}
	for i, e := range res.Entries {
		if e.Id != app.Entries[i].Id || !entryIDForm.MatchString(e.Id) || e.Seq != uint64(i+2) {
			t.Fatalf("appended entry %d = %v, sent id %q", i, e, app.Entries[i].Id)
		}
	}

	st, err := c.Session.GetState(ctx, &sessiondv1.GetStateRequest{Workspace: workspace, Session: id})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range st.State.Messages {
		texts = append(texts, m.Message.Role.String()+":"+TextOf(m.Message))
	}
	if fmt.Sprint(texts) != "[ROLE_USER:What is 2+2? ROLE_ASSISTANT: ROLE_TOOL:4 ROLE_ASSISTANT:4]" || st.State.GetLabel() != "asked" {
		t.Fatalf("GetState: %v, label %q", texts, st.State.GetLabel())
	}

	ents, err := c.Session.GetEntries(ctx, &sessiondv1.GetEntriesRequest{Workspace: workspace, Session: id, AfterSeq: 1, Limit: 2})
	if err != nil || len(ents.Entries) != 2 || ents.Entries[0].Id != app.Entries[0].Id || ents.HeadSeq != 6 {
		t.Fatalf("GetEntries: %v, %v", ents, err)
	}

	tree, err := c.Session.GetTree(ctx, &sessiondv1.GetTreeRequest{Workspace: workspace, Session: id})
	if err != nil || len(tree.Nodes) != 6 || tree.Nodes[2].Kind != sessiondv1.EntryKind_ENTRY_KIND_LABEL || tree.LeafId != res.LeafId {
		t.Fatalf("GetTree: %v, %v", tree, err)
	}

	rw := &sessiondv1.RewindRequest{Workspace: workspace, Session: id, Target: "asked"}
	rwRes, err := c.Session.Rewind(ctx, rw)
	if err != nil || rwRes.LeafId != label.Id || rwRes.LeafEntryId != rw.GetEntryId() || rwRes.HeadSeq != 7 {
		t.Fatalf("Rewind: %v, %v (entry id chosen before send %q)", rwRes, err, rw.GetEntryId())
	}
	rs := &sessiondv1.ResetRequest{Workspace: workspace, Session: id}
	rsRes, err := c.Session.Reset(ctx, rs)
	if err != nil || rsRes.LeafId != ents.Entries[0].GetParentId() || rsRes.LeafEntryId != rs.GetEntryId() || rsRes.HeadSeq != 8 {
		t.Fatalf("Reset: %v, %v", rsRes, err)
	}

	w := c.WatchEntries(ctx, &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: id, AfterSeq: 5})
	defer w.Close()
	var seqs []uint64
	for len(seqs) < 3 {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e := ev.GetEntry(); e != nil {
			seqs = append(seqs, e.Seq)
		}
	}
	if fmt.Sprint(seqs) != "[6 7 8]" || w.LastSeq() != 8 {
		t.Fatalf("watched seqs %v, last %d", seqs, w.LastSeq())
	}
}

func TestLiveAppendRetriedAfterLostReplyIsNotDuplicated(t *testing.T) {
	probe := &attempts{method: "/sessiond.v1.SessionService/Append", plan: []string{"lose", "refuse"}}
	c := live(t, WithUnaryInterceptors(probe.interceptor), WithRetry(5, 10*time.Millisecond, 50*time.Millisecond))
	ctx := ctxFor(t)
	id := newSession(t, c)

	app := &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{UserText("once"), AssistantText("only once")}}
	res, err := c.Session.Append(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if probe.n != 3 {
		t.Fatalf("%d attempts, want 3 (lost reply, refused, success)", probe.n)
	}
	if !res.Deduplicated || res.HeadSeq != 3 {
		t.Fatalf("the retry was not recognised as a repeat: %v", res)
	}
	ents, err := c.Session.GetEntries(ctx, &sessiondv1.GetEntriesRequest{Workspace: workspace, Session: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(ents.Entries) != 3 || ents.Entries[1].Id != app.Entries[0].Id || ents.Entries[2].Id != app.Entries[1].Id {
		t.Fatalf("log after the retried append: %v", ents.Entries)
	}

	// Negative control: without ids chosen before send (a bare connection,
	// no interceptors), sending the same request twice stores it twice.
	bareOpts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if tok := os.Getenv("SESSIOND_TOKEN"); tok != "" {
		bareOpts = append(bareOpts, grpc.WithPerRPCCredentials(bearer{token: tok}))
	}
	bare, err := grpc.NewClient(os.Getenv("SESSIOND_ADDR"), bareOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	raw := New(bare)
	dup := &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{UserText("twice")}}
	for i := 0; i < 2; i++ {
		if _, err := raw.Session.Append(ctx, dup); err != nil {
			t.Fatal(err)
		}
	}
	ents, err = c.Session.GetEntries(ctx, &sessiondv1.GetEntriesRequest{Workspace: workspace, Session: id})
	if err != nil || len(ents.Entries) != 5 {
		t.Fatalf("the bare connection's repeat was not duplicated (%d entries, %v): the check above proves nothing", len(ents.Entries), err)
	}
}

func TestLiveCASConflictIsAbortedAndNotRetried(t *testing.T) {
	probe := &attempts{method: "/sessiond.v1.SessionService/Append"}
	c := live(t, WithUnaryInterceptors(probe.interceptor))
	ctx := ctxFor(t)
	id := newSession(t, c)

	seq := uint64(7)
	_, err := c.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{UserText("x")}, ExpectedSeq: &seq})
	wantCode(t, err, codes.Aborted, "Append with a stale expected_seq")
	if probe.n != 1 {
		t.Fatalf("ABORTED was attempted %d times, want 1", probe.n)
	}
	one := uint64(1)
	if _, err := c.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{UserText("x")}, ExpectedSeq: &one}); err != nil {
		t.Fatalf("Append with the right expected_seq: %v", err)
	}
	leaf := "not-the-leaf"
	_, err = c.Session.Reset(ctx, &sessiondv1.ResetRequest{Workspace: workspace, Session: id, ExpectedLeafId: &leaf})
	wantCode(t, err, codes.Aborted, "Reset with a stale expected_leaf_id")
}

func TestLiveNotFoundCodes(t *testing.T) {
	c := live(t)
	ctx := ctxFor(t)
	missing := "nothere-" + NewEntryID()
	_, err := c.Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: missing})
	wantCode(t, err, codes.NotFound, "GetSession")
	_, err = c.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: missing, Entries: []*sessiondv1.Entry{UserText("x")}})
	wantCode(t, err, codes.NotFound, "Append")
	_, err = c.Store.DeleteSession(ctx, &sessiondv1.DeleteSessionRequest{Workspace: workspace, Session: missing})
	wantCode(t, err, codes.NotFound, "DeleteSession on its first attempt")
	id := newSession(t, c)
	_, err = c.Session.Rewind(ctx, &sessiondv1.RewindRequest{Workspace: workspace, Session: id, Target: "no-such-label"})
	wantCode(t, err, codes.NotFound, "Rewind to an unknown target")
	_, err = c.Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: "ab"})
	wantCode(t, err, codes.InvalidArgument, "GetSession by a 2-character prefix")
}

func TestLiveDeleteRetriedAfterLostReplySucceeds(t *testing.T) {
	probe := &attempts{method: deleteSessionMethod, plan: []string{"lose"}}
	c := live(t, WithUnaryInterceptors(probe.interceptor), WithRetry(5, 10*time.Millisecond, 50*time.Millisecond))
	ctx := ctxFor(t)
	id := newSession(t, c)
	res, err := c.Store.DeleteSession(ctx, &sessiondv1.DeleteSessionRequest{Workspace: workspace, Session: id})
	if err != nil || probe.n != 2 || len(res.GetDeletedSessionIds()) != 0 {
		t.Fatalf("retried delete: %v, %v after %d attempts; want success, no ids, 2 attempts", res, err, probe.n)
	}
	_, err = c.Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: id})
	wantCode(t, err, codes.NotFound, "the session after the retried delete")
}

func TestLiveWatchEndsWithNotFoundWhenTheSessionIsDeleted(t *testing.T) {
	c := live(t)
	ctx := ctxFor(t)
	id := newSession(t, c)
	w := c.WatchEntries(ctx, &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: id})
	defer w.Close()
	if ev, err := w.Next(); err != nil || ev.GetEntry().GetSeq() != 1 {
		t.Fatalf("first event: %v, %v", ev, err)
	}
	if _, err := c.Store.DeleteSession(ctx, &sessiondv1.DeleteSessionRequest{Workspace: workspace, Session: id}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := w.Next()
		if err != nil {
			wantCode(t, err, codes.NotFound, "watch of a deleted session")
			break
		}
		if ev.GetEntry() != nil {
			t.Fatalf("an entry after the delete: %v", ev)
		}
	}
	if w.Reconnects() != 0 {
		t.Fatalf("%d reconnects, want 0", w.Reconnects())
	}
}

func TestLiveWatchCloseEndsNext(t *testing.T) {
	c := live(t)
	id := newSession(t, c)
	w := c.WatchEntries(context.Background(), &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: id, AfterSeq: 1})
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for err == nil {
			_, err = w.Next()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	w.Close()
	wg.Wait()
	wantCode(t, err, codes.Canceled, "Next after Close")
}

// TestLiveWatchResumesAcrossRestart needs whoever runs it to restart the
// server: SESSIOND_RESTART_DIR names a directory; the test writes
// "restart-1.request" there once its watch is established and waits for
// "restart-1.done" to appear (the restart handshake of conformance/README.md:
// the vitest side restarts the server on the same port and data dir in
// between). Entries appended after the restart, while
// the watcher is still disconnected, must arrive once each, in order.
func TestLiveWatchResumesAcrossRestart(t *testing.T) {
	c := live(t, WithRetry(20, 50*time.Millisecond, time.Second))
	dir := os.Getenv("SESSIOND_RESTART_DIR")
	if dir == "" {
		t.Skip("*** SKIPPED: SESSIOND_RESTART_DIR is not set (nobody to restart the server) ***")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	id := newSession(t, c)
	first := &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{UserText("before 1"), UserText("before 2")}}
	if _, err := c.Session.Append(ctx, first); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	w := c.WatchEntries(ctx, &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: id},
		WithReconnectDelay(50*time.Millisecond, 500*time.Millisecond),
		OnReconnect(func(err error, after uint64) {
			reasons = append(reasons, fmt.Sprintf("%v@%d", status.Code(err), after))
		}))
	defer w.Close()
	var got []string
	next := func() {
		for {
			ev, err := w.Next()
			if err != nil {
				t.Fatalf("watch ended: %v (after %v)", err, got)
			}
			if e := ev.GetEntry(); e != nil {
				got = append(got, fmt.Sprintf("%d:%s", e.Seq, e.Id))
				return
			}
		}
	}
	for i := 0; i < 3; i++ {
		next()
	}

	if err := os.WriteFile(dir+"/restart-1.request", []byte(id), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(dir + "/restart-1.done"); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the server was not restarted in time")
		case <-time.After(50 * time.Millisecond):
		}
	}

	second := &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{UserText("after 1"), UserText("after 2")}}
	if _, err := c.Session.Append(ctx, second); err != nil {
		t.Fatalf("append after the restart: %v", err)
	}
	next()
	next()
	want := []string{"1:", "2:" + first.Entries[0].Id, "3:" + first.Entries[1].Id, "4:" + second.Entries[0].Id, "5:" + second.Entries[1].Id}
	for i := range want {
		if i == 0 {
			continue // the SessionInfo root's id is the server's
		}
		if got[i] != want[i] {
			t.Fatalf("watched %v, want %v", got, want)
		}
	}
	if w.Reconnects() < 1 || w.LastSeq() != 5 {
		t.Fatalf("reconnects=%d last=%d, want a resume and last seq 5", w.Reconnects(), w.LastSeq())
	}
	t.Logf("resumed after %v", reasons)
}

func TestLiveReadStateAndReadTreeMergePages(t *testing.T) {
	c := live(t)
	ctx := ctxFor(t)
	id := newSession(t, c)
	var entries []*sessiondv1.Entry
	for i := 0; i < 5; i++ {
		entries = append(entries, UserText(fmt.Sprint("m", i)))
	}
	if _, err := c.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	stateReq := &sessiondv1.GetStateRequest{Workspace: workspace, Session: id, PageSize: 2}
	first, err := c.Session.GetState(ctx, stateReq)
	if err != nil || len(first.State.Messages) != 2 || first.NextPageToken == "" {
		t.Fatalf("page 1 of GetState: %v, %v (the server does not page: this test proves nothing)", first, err)
	}
	st, err := c.ReadState(ctx, stateReq)
	if err != nil || st.NextPageToken != "" || len(st.State.Messages) != 5 || TextOf(st.State.Messages[4].Message) != "m4" {
		t.Fatalf("ReadState: %v, %v", st, err)
	}
	tree, err := c.ReadTree(ctx, &sessiondv1.GetTreeRequest{Workspace: workspace, Session: id, PageSize: 2})
	if err != nil || tree.NextPageToken != "" || len(tree.Nodes) != 6 || tree.Nodes[5].Id != entries[4].Id {
		t.Fatalf("ReadTree: %v, %v", tree, err)
	}
	if stateReq.PageToken != "" {
		t.Fatal("ReadState modified the caller's request")
	}
}

func TestLiveCallTimeoutBindsUnaryCallsOnly(t *testing.T) {
	writer := live(t)
	c := live(t, WithCallTimeout(time.Nanosecond))
	_, err := c.Store.GetSession(context.Background(), &sessiondv1.GetSessionRequest{Workspace: workspace, Session: "whatever"})
	wantCode(t, err, codes.DeadlineExceeded, "GetSession with a 1 ns call timeout")

	id := newSession(t, writer)
	w := c.WatchEntries(ctxFor(t), &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: id, AfterSeq: 1})
	defer w.Close()
	time.Sleep(300 * time.Millisecond)
	if _, err := writer.Session.Append(ctxFor(t), &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{UserText("late")}}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e := ev.GetEntry(); e != nil {
			if e.Seq != 2 || w.Reconnects() != 0 {
				t.Fatalf("entry %v after %d reconnects, want seq 2 on the first stream", e, w.Reconnects())
			}
			break
		}
	}
}

// TestLiveTLSAndToken needs a second server with TLS and bearer tokens:
// SESSIOND_TLS_ADDR (host:port), SESSIOND_TLS_CA (the CA's PEM file) and
// SESSIOND_TLS_TOKEN (a token it accepts for every workspace).
func TestLiveTLSAndToken(t *testing.T) {
	addr, caFile, token := os.Getenv("SESSIOND_TLS_ADDR"), os.Getenv("SESSIOND_TLS_CA"), os.Getenv("SESSIOND_TLS_TOKEN")
	if addr == "" || caFile == "" || token == "" {
		t.Skip("*** SKIPPED: SESSIOND_TLS_ADDR, SESSIOND_TLS_CA and SESSIOND_TLS_TOKEN are not all set (no TLS server with tokens) ***")
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	dial := func(opts ...Option) *Client {
		c, err := Dial(context.Background(), addr, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx := ctxFor(t)

	c := dial(WithTLS(ca), WithToken(token))
	res, err := c.Store.CreateSession(ctx, &sessiondv1.CreateSessionRequest{Workspace: workspace})
	if err != nil {
		t.Fatalf("CreateSession over TLS with the token: %v", err)
	}
	w := c.WatchEntries(ctx, &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: res.Session.Id})
	defer w.Close()
	if ev, err := w.Next(); err != nil || ev.GetEntry().GetSeq() != 1 {
		t.Fatalf("a watch carries the token too: %v, %v", ev, err)
	}

	_, err = dial(WithTLS(ca)).Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: res.Session.Id})
	wantCode(t, err, codes.Unauthenticated, "no token")
	_, err = dial(WithTLS(ca), WithToken("wrong-token-0123456789")).Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: res.Session.Id})
	wantCode(t, err, codes.Unauthenticated, "a wrong token")
	_, err = dial(WithToken(token), WithoutRetry()).Store.GetSession(ctx, &sessiondv1.GetSessionRequest{Workspace: workspace, Session: res.Session.Id})
	wantCode(t, err, codes.Unavailable, "plaintext to a TLS port")
	if _, err := Dial(ctx, addr, WithTLS([]byte("not a certificate"))); err == nil {
		t.Fatal("WithTLS accepted a CA without a certificate")
	}
}
