package sessiond

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var (
	entryIDForm   = regexp.MustCompile(`^[0-9a-f]{16}$`)
	sessionIDForm = regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{8}$`)
)

func TestNewEntryIDIs16HexAndRandom(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewEntryID()
		if !entryIDForm.MatchString(id) {
			t.Fatalf("entry id %q is not 16 lowercase hex characters", id)
		}
		if seen[id] {
			t.Fatalf("entry id %q drawn twice in 1000", id)
		}
		seen[id] = true
	}
}

func TestNewSessionIDIsUTCTimestampAndHex(t *testing.T) {
	berlin := time.FixedZone("UTC+2", 2*3600)
	at := time.Date(2026, 11, 30, 1, 2, 3, 0, berlin) // 2026-11-29 23:02:03 UTC
	a, b := NewSessionID(at), NewSessionID(at)
	for _, id := range []string{a, b} {
		if !sessionIDForm.MatchString(id) {
			t.Fatalf("session id %q is not YYYYMMDD-HHMMSS-<8 hex>", id)
		}
		if id[:16] != "20261129-230203-" {
			t.Fatalf("session id %q does not start with the UTC time 20261129-230203-", id)
		}
	}
	if a == b {
		t.Fatalf("two session ids of the same second are equal: %q", a)
	}
}

func TestFillIDsSetsOnlyWhatIsUnset(t *testing.T) {
	kept := "mine"
	empty := ""
	app := &sessiondv1.AppendRequest{Entries: []*sessiondv1.Entry{UserText("a"), {Id: "given"}, AssistantText("b")}}
	if !FillIDs(app) {
		t.Fatal("FillIDs reported no change on an Append with empty ids")
	}
	if e := app.Entries; !entryIDForm.MatchString(e[0].Id) || e[1].Id != "given" || !entryIDForm.MatchString(e[2].Id) || e[0].Id == e[2].Id {
		t.Fatalf("append ids = %q, %q, %q", e[0].Id, e[1].Id, e[2].Id)
	}
	if FillIDs(app) {
		t.Fatal("FillIDs changed an Append whose ids are all set")
	}

	rw := &sessiondv1.RewindRequest{}
	rs := &sessiondv1.ResetRequest{}
	FillIDs(rw)
	FillIDs(rs)
	if !entryIDForm.MatchString(rw.GetEntryId()) || !entryIDForm.MatchString(rs.GetEntryId()) {
		t.Fatalf("rewind / reset entry ids = %q / %q", rw.GetEntryId(), rs.GetEntryId())
	}
	cr := &sessiondv1.CreateSessionRequest{}
	fk := &sessiondv1.ForkSessionRequest{}
	FillIDs(cr)
	FillIDs(fk)
	if !sessionIDForm.MatchString(cr.GetSessionId()) || !sessionIDForm.MatchString(fk.GetSessionId()) {
		t.Fatalf("create / fork session ids = %q / %q", cr.GetSessionId(), fk.GetSessionId())
	}

	// Set values, an explicit empty string included, are the caller's.
	for _, req := range []interface{}{
		&sessiondv1.RewindRequest{EntryId: &kept},
		&sessiondv1.ResetRequest{EntryId: &empty},
		&sessiondv1.CreateSessionRequest{SessionId: &kept},
		&sessiondv1.ForkSessionRequest{SessionId: &empty},
		&sessiondv1.GetStateRequest{},
	} {
		if FillIDs(req) {
			t.Fatalf("FillIDs changed %T, which had nothing unset", req)
		}
	}
	if kept != "mine" || empty != "" {
		t.Fatal("FillIDs wrote through a caller's pointer")
	}
}

func TestFillIDsOfAnImportKeepsTheRecordedSessionIDAndFillsEntries(t *testing.T) {
	root := &sessiondv1.Entry{Id: "r", Kind: &sessiondv1.Entry_SessionInfo{SessionInfo: &sessiondv1.SessionInfo{SessionId: "kept"}}}
	req := &sessiondv1.ImportSessionRequest{Entries: []*sessiondv1.Entry{root, UserText("a")}}
	if !FillIDs(req) {
		t.Fatal("FillIDs reported no change on an import with empty ids")
	}
	if req.GetSessionId() != "kept" || !entryIDForm.MatchString(req.Entries[1].Id) || req.Entries[1].Timestamp == nil || root.Timestamp == nil {
		t.Fatalf("import = %q, %q, %v", req.GetSessionId(), req.Entries[1].Id, req.Entries[1].Timestamp)
	}
	if FillIDs(req) {
		t.Fatal("FillIDs changed an import whose ids are all set")
	}
	empty := &sessiondv1.ImportSessionRequest{}
	FillIDs(empty)
	if !sessionIDForm.MatchString(empty.GetSessionId()) {
		t.Fatalf("session id of an import without entries = %q", empty.GetSessionId())
	}
}

// drawing makes drawSessionID draw ids in turn and then fresh ones, until
// the test ends; it returns how many were drawn.
func drawing(t *testing.T, ids ...string) *int {
	t.Helper()
	prev := drawSessionID
	n := 0
	drawSessionID = func() string {
		n++
		if n <= len(ids) {
			return ids[n-1]
		}
		return prev()
	}
	t.Cleanup(func() { drawSessionID = prev })
	return &n
}

// takenID is the id of the session fakeStore holds before a test.
const takenID = "20260101-000000-0badcafe"

// fakeStore answers CreateSession, ForkSession and ImportSession about their
// ids as the server does: a request (session_id included) equal to the one
// that made the session answers it again (created=false; a fork as
// created), any other under a taken id is ALREADY_EXISTS. A plan per
// attempt, like live_test.go's attempts: "lose" acts and then reports
// UNAVAILABLE, "refuse" reports UNAVAILABLE without acting.
type fakeStore struct {
	sessions map[string]proto.Message
	plan     []string
	attempts int
	// nested, when set, is called (with the call's ctx) before an import
	// is acted on, as the blobs' PutBlob calls are.
	nested func(ctx context.Context) error
}

func newFakeStore(taken proto.Message) *fakeStore {
	return &fakeStore{sessions: map[string]proto.Message{takenID: taken}}
}

func (f *fakeStore) invoke(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
	if method == "/nested" {
		return nil
	}
	f.attempts++
	step := ""
	if f.attempts <= len(f.plan) {
		step = f.plan[f.attempts-1]
	}
	if step == "refuse" {
		return refused
	}
	if f.nested != nil {
		if err := f.nested(ctx); err != nil {
			return err
		}
	}
	var id string
	switch r := req.(type) {
	case *sessiondv1.CreateSessionRequest:
		id = r.GetSessionId()
	case *sessiondv1.ForkSessionRequest:
		id = r.GetSessionId()
	case *sessiondv1.ImportSessionRequest:
		id = r.GetSessionId()
	}
	m := req.(proto.Message)
	created := true
	if old, ok := f.sessions[id]; ok {
		if !proto.Equal(old, m) {
			return status.Errorf(codes.AlreadyExists, "session %q already exists", id)
		}
		created = false
	} else {
		f.sessions[id] = proto.Clone(m)
		if step == "lose-moved" {
			// What the attempt stored no longer equals the request: a fork
			// of the current leaf whose leaf moved before the retry.
			f.sessions[id].(*sessiondv1.ForkSessionRequest).Entry = "old-leaf"
		}
	}
	meta := &sessiondv1.SessionMeta{Id: id}
	switch r := reply.(type) {
	case *sessiondv1.CreateSessionResponse:
		r.Session, r.Created = meta, created
	case *sessiondv1.ForkSessionResponse:
		r.Session = meta
	case *sessiondv1.ImportSessionResponse:
		r.Session, r.Created = meta, created
	}
	if step == "lose" || step == "lose-moved" {
		return lost
	}
	return nil
}

// chained is the invoker that runs interceptors, the first outermost, around final.
func chained(final grpc.UnaryInvoker, interceptors ...grpc.UnaryClientInterceptor) grpc.UnaryInvoker {
	for i := len(interceptors) - 1; i >= 0; i-- {
		next, ic := final, interceptors[i]
		final = func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
			return ic(ctx, method, req, reply, cc, next, opts...)
		}
	}
	return final
}

var fastRetry = RetryPolicy{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

// withAndWithoutRetry are the two chains the ids rules hold in: Dial's (ids,
// then retry) and WithoutRetry's (ids alone).
var withAndWithoutRetry = map[string][]grpc.UnaryClientInterceptor{
	"with retry":    {IDsInterceptor(), RetryInterceptor(fastRetry)},
	"without retry": {IDsInterceptor()},
}

// idCall is a call of one of the three RPCs whose session id may be drawn.
type idCall struct {
	method string
	req    func() proto.Message
	reply  func() proto.Message
}

var (
	title       = "t"
	other       = "other"
	importLog   = []*sessiondv1.Entry{{Id: "root", Timestamp: &timestamppb.Timestamp{Seconds: 1}, Kind: &sessiondv1.Entry_SessionInfo{SessionInfo: &sessiondv1.SessionInfo{}}}}
	createCall  = idCall{"/sessiond.v1.StoreService/CreateSession", func() proto.Message { return &sessiondv1.CreateSessionRequest{Workspace: "w", Title: &title} }, func() proto.Message { return &sessiondv1.CreateSessionResponse{} }}
	forkCall    = idCall{"/sessiond.v1.StoreService/ForkSession", func() proto.Message { return &sessiondv1.ForkSessionRequest{Workspace: "w", Session: "src"} }, func() proto.Message { return &sessiondv1.ForkSessionResponse{} }}
	importCall  = idCall{"/sessiond.v1.StoreService/ImportSession", func() proto.Message { return &sessiondv1.ImportSessionRequest{Workspace: "w", Entries: importLog} }, func() proto.Message { return &sessiondv1.ImportSessionResponse{} }}
	withTakenID = func(m proto.Message) proto.Message {
		m = proto.Clone(m)
		setSessionID(m, takenID)
		return m
	}
)

// outcome is what a reply says: the session id, and created (a fork's is
// always true).
func outcome(reply proto.Message) (string, bool) {
	switch r := reply.(type) {
	case *sessiondv1.CreateSessionResponse:
		return r.GetSession().GetId(), r.GetCreated()
	case *sessiondv1.ForkSessionResponse:
		return r.GetSession().GetId(), r.GetSession() != nil
	case *sessiondv1.ImportSessionResponse:
		return r.GetSession().GetId(), r.GetCreated()
	}
	return "", false
}

// sessionIDOf is the session id a request carries.
func sessionIDOf(req proto.Message) string {
	switch r := req.(type) {
	case *sessiondv1.CreateSessionRequest:
		return r.GetSessionId()
	case *sessiondv1.ForkSessionRequest:
		return r.GetSessionId()
	case *sessiondv1.ImportSessionRequest:
		return r.GetSessionId()
	}
	return ""
}

func TestIDsDrawAgainASessionIDThatIsTaken(t *testing.T) {
	// The session under the taken id was made with the same parameters (a
	// fork: from another source; an import: the same log), or with others.
	otherTitle := &sessiondv1.CreateSessionRequest{Workspace: "w", Title: &other}
	otherFork := &sessiondv1.ForkSessionRequest{Workspace: "w", Session: "another"}
	otherLog := &sessiondv1.ImportSessionRequest{Workspace: "w", Entries: []*sessiondv1.Entry{{Id: "other-root", Kind: &sessiondv1.Entry_SessionInfo{SessionInfo: &sessiondv1.SessionInfo{}}}}}
	cases := []struct {
		name  string
		call  idCall
		taken proto.Message
	}{
		{"create, equal parameters", createCall, createCall.req()},
		{"create, other parameters", createCall, otherTitle},
		{"fork", forkCall, otherFork},
		{"import, the same log", importCall, importCall.req()},
		{"import, another log", importCall, otherLog},
	}
	for chain, interceptors := range withAndWithoutRetry {
		for _, c := range cases {
			draws := drawing(t, takenID)
			taken := withTakenID(c.taken)
			store := newFakeStore(proto.Clone(taken))
			req, reply := c.call.req(), c.call.reply()
			err := chained(store.invoke, interceptors...)(context.Background(), c.call.method, req, reply, nil)
			id, created := outcome(reply)
			if err != nil || !created || id == takenID || id != sessionIDOf(req) || !sessionIDForm.MatchString(id) {
				t.Errorf("%s, %s: %v, id %q created=%v (request's id %q); want a new session", c.name, chain, err, id, created, sessionIDOf(req))
				continue
			}
			if *draws != 2 || store.attempts != 2 || !proto.Equal(store.sessions[takenID], taken) || len(store.sessions) != 2 {
				t.Errorf("%s, %s: %d draws, %d attempts, %d sessions; want 2, 2, 2 and the taken one unchanged", c.name, chain, *draws, store.attempts, len(store.sessions))
			}
		}
	}
}

func TestIDsKeepTheSessionOfAnAttemptWithUnknownOutcome(t *testing.T) {
	for _, call := range []idCall{createCall, importCall} {
		// The first attempt created the session and its answer was lost: the
		// retry's created=false is this call's own session.
		draws := drawing(t)
		store := &fakeStore{sessions: map[string]proto.Message{}, plan: []string{"lose"}}
		req, reply := call.req(), call.reply()
		err := chained(store.invoke, IDsInterceptor(), RetryInterceptor(fastRetry))(context.Background(), call.method, req, reply, nil)
		id, created := outcome(reply)
		if err != nil || created || id != sessionIDOf(req) || *draws != 1 || store.attempts != 2 || len(store.sessions) != 1 {
			t.Fatalf("%s after a lost answer: %v, id %q created=%v, %d draws, %d attempts, %d sessions; want created=false, the same id, 1 draw, 2 attempts", call.method, err, id, created, *draws, store.attempts, len(store.sessions))
		}

		// An attempt that never reached the server proves nothing of the
		// kind: created=false after it is another session's.
		draws = drawing(t, takenID)
		store = newFakeStore(withTakenID(call.req()))
		store.plan = []string{"refuse"}
		req, reply = call.req(), call.reply()
		err = chained(store.invoke, IDsInterceptor(), RetryInterceptor(fastRetry))(context.Background(), call.method, req, reply, nil)
		id, created = outcome(reply)
		if err != nil || !created || id == takenID || id != sessionIDOf(req) || *draws != 2 {
			t.Fatalf("%s refused, then created=false for a taken id: %v, id %q created=%v, %d draws; want a new session", call.method, err, id, created, *draws)
		}
	}
}

func TestIDsKeepTheRefusalOfAForkWhoseLostAttemptForkedAnotherLeaf(t *testing.T) {
	// The first attempt forked the then current leaf and its answer was
	// lost; the leaf moved, so the retry is refused ALREADY_EXISTS by that
	// very fork. Drawing again would make a second fork.
	draws := drawing(t)
	store := &fakeStore{sessions: map[string]proto.Message{}, plan: []string{"lose-moved"}}
	req, reply := forkCall.req(), forkCall.reply()
	err := chained(store.invoke, IDsInterceptor(), RetryInterceptor(fastRetry))(context.Background(), forkCall.method, req, reply, nil)
	if status.Code(err) != codes.AlreadyExists || *draws != 1 || store.attempts != 2 || len(store.sessions) != 1 {
		t.Fatalf("fork after a lost answer, leaf moved: %v, %d draws, %d attempts, %d sessions; want ALREADY_EXISTS, 1 draw, 2 attempts, 1 session", err, *draws, store.attempts, len(store.sessions))
	}
}

func TestIDsNeverDrawAgainASessionIDTheyDidNotDraw(t *testing.T) {
	taken := withTakenID(createCall.req())
	run := func(call idCall, req proto.Message) (proto.Message, *fakeStore, error) {
		store := newFakeStore(proto.Clone(taken))
		reply := call.reply()
		err := chained(store.invoke, IDsInterceptor(), RetryInterceptor(fastRetry))(context.Background(), call.method, req, reply, nil)
		return reply, store, err
	}
	draws := drawing(t)

	// The caller's id, with the parameters of the session it names and with others.
	reply, _, err := run(createCall, withTakenID(createCall.req()))
	if id, created := outcome(reply); err != nil || created || id != takenID {
		t.Fatalf("the caller's taken id, equal parameters: %v, id %q created=%v; want created=false and that id", err, id, created)
	}
	given := takenID
	_, store, err := run(createCall, &sessiondv1.CreateSessionRequest{Workspace: "w", Title: &other, SessionId: &given})
	if status.Code(err) != codes.AlreadyExists || store.attempts != 1 {
		t.Fatalf("the caller's taken id, other parameters: %v after %d attempts; want ALREADY_EXISTS after 1", err, store.attempts)
	}
	// The id an import's root records.
	recorded := &sessiondv1.ImportSessionRequest{Workspace: "w", Entries: []*sessiondv1.Entry{{Id: "r", Kind: &sessiondv1.Entry_SessionInfo{SessionInfo: &sessiondv1.SessionInfo{SessionId: takenID}}}}}
	if _, store, err = run(importCall, recorded); status.Code(err) != codes.AlreadyExists || store.attempts != 1 || recorded.GetSessionId() != takenID {
		t.Fatalf("the id the import's root records: %v after %d attempts, id %q; want ALREADY_EXISTS after 1", err, store.attempts, recorded.GetSessionId())
	}
	if *draws != 0 {
		t.Fatalf("%d session ids drawn for requests that had theirs", *draws)
	}

	// An id drawn before this call (by FillIDs, or by an earlier call with
	// the same request) is sent as it is: the call may be a retry.
	draws = drawing(t, takenID)
	filled := createCall.req()
	FillIDs(filled)
	if reply, _, err = run(createCall, filled); err != nil || sessionIDOf(filled) != takenID || *draws != 1 {
		t.Fatalf("an id FillIDs drew: %v, request's id %q, %d draws; want the taken id, not drawn again", err, sessionIDOf(filled), *draws)
	}
	if id, created := outcome(reply); created || id != takenID {
		t.Fatalf("an id FillIDs drew: id %q created=%v; want created=false", id, created)
	}

	// Control: the same request without an id is drawn again.
	draws = drawing(t, takenID)
	req := createCall.req()
	if reply, _, err = run(createCall, req); err != nil || *draws != 2 {
		t.Fatalf("control: %v after %d draws", err, *draws)
	}
	if id, created := outcome(reply); !created || id == takenID || id != sessionIDOf(req) {
		t.Fatalf("control: id %q created=%v; want a new session", id, created)
	}
}

func TestIDsDrawAtMostEightSessionIDs(t *testing.T) {
	always := make([]string, 100)
	for i := range always {
		always[i] = takenID
	}
	for chain, interceptors := range withAndWithoutRetry {
		for _, sameParameters := range []bool{false, true} {
			draws := drawing(t, always...)
			taken := &sessiondv1.CreateSessionRequest{Workspace: "w", Title: &other}
			if sameParameters {
				taken = createCall.req().(*sessiondv1.CreateSessionRequest)
			}
			store := newFakeStore(withTakenID(taken))
			reply := &sessiondv1.CreateSessionResponse{}
			err := chained(store.invoke, interceptors...)(context.Background(), createCall.method, createCall.req(), reply, nil)
			if *draws != 8 || store.attempts != 8 {
				t.Fatalf("%s, same parameters %v: %d draws, %d attempts; want 8", chain, sameParameters, *draws, store.attempts)
			}
			if sameParameters && (err != nil || reply.GetCreated() || reply.GetSession().GetId() != takenID) {
				t.Fatalf("%s: the 8th answer is %v, %v; want it as it is (created=false)", chain, reply, err)
			}
			if !sameParameters && status.Code(err) != codes.AlreadyExists {
				t.Fatalf("%s: the 8th answer is %v; want ALREADY_EXISTS as it is", chain, err)
			}
		}
	}
}

func TestIDsOfAnImportIgnoreTheRetriesOfCallsMadeWithinIt(t *testing.T) {
	// The blobs' PutBlob calls go through the whole chain with the import's
	// ctx; one whose answer was lost and was retried says nothing about the
	// import's own attempts.
	draws := drawing(t, takenID)
	store := newFakeStore(withTakenID(importCall.req()))
	var invoke grpc.UnaryInvoker
	nestedLost := false
	store.nested = func(ctx context.Context) error {
		return invoke(ctx, "/nested", nil, nil, nil)
	}
	lossy := func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == "/nested" && !nestedLost {
			nestedLost = true
			return lost
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	invoke = chained(store.invoke, IDsInterceptor(), RetryInterceptor(fastRetry), lossy)
	req, reply := importCall.req(), importCall.reply()
	err := invoke(context.Background(), importCall.method, req, reply, nil)
	if id, created := outcome(reply); err != nil || !nestedLost || !created || id == takenID || *draws != 2 {
		t.Fatalf("import with a retried nested call: %v, id %q created=%v, %d draws; want a new session", err, id, created, *draws)
	}
}
