package sessiond

import (
	"regexp"
	"testing"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
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
