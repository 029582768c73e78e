package sessiond

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// NewEntryID returns a random entry id: 16 lowercase hex characters (64
// random bits), the same form the server and the other clients use.
func NewEntryID() string {
	return randomHex(8)
}

// NewSessionID returns a session id of the form YYYYMMDD-HHMMSS-<8 hex> for
// the given time in UTC: ids sort by creation time, as the server's do.
func NewSessionID(now time.Time) string {
	return now.UTC().Format("20060102-150405") + "-" + randomHex(4)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on the platforms Go supports; an id that
		// is not random would make retries collide, so do not go on.
		panic("sessiond: crypto/rand: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// FillIDs sets the ids a request leaves empty, in place, and reports whether
// it changed anything. It is what IDsInterceptor does before a call; call it
// yourself to learn the ids before sending (e.g. to log them).
//
// Only fields the server would otherwise choose are filled: entry ids on
// AppendRequest, entry_id on RewindRequest and ResetRequest (unset =
// nil, these fields are proto3 optional), session_id on CreateSessionRequest
// and ForkSessionRequest (likewise optional), and on ImportSessionRequest
// the session_id (the one its root records, else a new one) with the ids and
// timestamps of its entries. A value the caller set,
// including an explicit empty string on an optional field, is kept.
func FillIDs(req interface{}) bool {
	switch r := req.(type) {
	case *sessiondv1.AppendRequest:
		changed := false
		for _, e := range r.GetEntries() {
			if e != nil && e.Id == "" {
				e.Id = NewEntryID()
				changed = true
			}
		}
		return changed
	case *sessiondv1.RewindRequest:
		if r.EntryId == nil {
			id := NewEntryID()
			r.EntryId = &id
			return true
		}
	case *sessiondv1.ResetRequest:
		if r.EntryId == nil {
			id := NewEntryID()
			r.EntryId = &id
			return true
		}
	case *sessiondv1.CreateSessionRequest:
		if r.SessionId == nil {
			id := NewSessionID(time.Now())
			r.SessionId = &id
			return true
		}
	case *sessiondv1.ForkSessionRequest:
		if r.SessionId == nil {
			id := NewSessionID(time.Now())
			r.SessionId = &id
			return true
		}
	case *sessiondv1.ImportSessionRequest:
		return fillImport(r)
	}
	return false
}

// IDsInterceptor fills empty ids (see FillIDs) before the request leaves the
// process. Dial chains it before RetryInterceptor.
//
// The request is modified in place, which is what makes retries safe: every
// attempt (RetryInterceptor's, or the caller's own after a timeout) sends
// the request that already holds the ids of the first, and the caller can
// read the ids that were sent from it afterwards.
func IDsInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		FillIDs(req)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// fillImport fixes what the server would choose for an import, so that a
// retry sends the same log (and the server answers it as already imported).
func fillImport(r *sessiondv1.ImportSessionRequest) bool {
	changed := false
	if r.SessionId == nil {
		id := ""
		if len(r.GetEntries()) > 0 {
			id = r.GetEntries()[0].GetSessionInfo().GetSessionId()
		}
		if id == "" {
			id = NewSessionID(time.Now())
		}
		r.SessionId = &id
		changed = true
	}
	now := timestamppb.Now()
	for _, e := range r.GetEntries() {
		if e == nil {
			continue
		}
		if e.Id == "" {
			e.Id = NewEntryID()
			changed = true
		}
		if e.Timestamp == nil {
			e.Timestamp = now
			changed = true
		}
	}
	return changed
}
