package sessiond

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
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

// drawSessionID draws every session id FillIDs and IDsInterceptor choose.
// Tests in this package replace it to draw an id that is taken.
var drawSessionID = func() string { return NewSessionID(time.Now()) }

// maxSessionIDDraws bounds the session ids IDsInterceptor draws for one
// call, the first included (the server draws its own ids as often).
const maxSessionIDDraws = 8

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
	changed, _ := fillIDs(req)
	return changed
}

// fillIDs is FillIDs; drew tells whether it drew the request's session id
// (CreateSession, ForkSession, or an ImportSession whose root records none).
func fillIDs(req interface{}) (changed, drew bool) {
	switch r := req.(type) {
	case *sessiondv1.AppendRequest:
		for _, e := range r.GetEntries() {
			if e != nil && e.Id == "" {
				e.Id = NewEntryID()
				changed = true
			}
		}
		return changed, false
	case *sessiondv1.RewindRequest:
		if r.EntryId == nil {
			id := NewEntryID()
			r.EntryId = &id
			return true, false
		}
	case *sessiondv1.ResetRequest:
		if r.EntryId == nil {
			id := NewEntryID()
			r.EntryId = &id
			return true, false
		}
	case *sessiondv1.CreateSessionRequest:
		if r.SessionId == nil {
			id := drawSessionID()
			r.SessionId = &id
			return true, true
		}
	case *sessiondv1.ForkSessionRequest:
		if r.SessionId == nil {
			id := drawSessionID()
			r.SessionId = &id
			return true, true
		}
	case *sessiondv1.ImportSessionRequest:
		return fillImport(r)
	}
	return false, false
}

// IDsInterceptor fills empty ids (see FillIDs) before the request leaves the
// process. Dial chains it before RetryInterceptor.
//
// The request is modified in place, which is what makes retries safe: every
// attempt (RetryInterceptor's, or the caller's own after a timeout) sends
// the request that already holds the ids of the first, and the caller can
// read the ids that were sent from it afterwards.
//
// A session id it drew in this call (not one the caller set, an import's
// root records, or an earlier call or FillIDs filled in) that turns out to
// be another session's is drawn again, up to 8 draws in all: two clients
// draw the same id in the same second once in 2^32 pairs. It is another's
// when the server answers ALREADY_EXISTS, or CreateSession or ImportSession
// answers created=false, and no earlier attempt with that id may have
// reached the server (after a retried attempt whose outcome is unknown, the
// session is most likely that attempt's: created=false is returned, as
// retries are meant to, and so is the ALREADY_EXISTS of a fork of the
// current leaf retried after the leaf moved). The new id is set on the request.
func IDsInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, drew := fillIDs(req); !drew {
			if ctx.Value(attemptsKey{}) != nil {
				// A call made while another is under way (the blobs'
				// PutBlob of an import): its retries are not the import's.
				ctx = context.WithValue(ctx, attemptsKey{}, (*sentAttempts)(nil))
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		for draw := 1; ; draw++ {
			sent := &sentAttempts{}
			err := invoker(context.WithValue(ctx, attemptsKey{}, sent), method, req, reply, cc, opts...)
			if draw >= maxSessionIDDraws || !takenByAnother(err, reply, sent) {
				return err
			}
			setSessionID(req, drawSessionID())
			if m, ok := reply.(proto.Message); ok {
				proto.Reset(m)
			}
		}
	}
}

// attemptsKey is the context key of the *sentAttempts of a call whose
// session id IDsInterceptor drew.
type attemptsKey struct{}

// sentAttempts is what RetryInterceptor tells IDsInterceptor about the
// attempts of one draw: unknown is set when an attempt that failed may have
// reached the server (and been acted on) before another was made.
type sentAttempts struct{ unknown atomic.Bool }

// markUnknownOutcome records, for IDsInterceptor, that an attempt of the
// call in ctx failed with an unknown outcome and will be repeated.
func markUnknownOutcome(ctx context.Context) {
	if s, _ := ctx.Value(attemptsKey{}).(*sentAttempts); s != nil {
		s.unknown.Store(true)
	}
}

// takenByAnother tells whether the outcome of a call under a session id
// IDsInterceptor drew says that another session has the id.
func takenByAnother(err error, reply interface{}, sent *sentAttempts) bool {
	if sent.unknown.Load() {
		// The session under the id is most likely our own lost attempt's:
		// created=false answers it, and a fork of the current leaf retried
		// after the leaf moved is refused ALREADY_EXISTS by our own fork.
		return false
	}
	if err != nil {
		return status.Code(err) == codes.AlreadyExists
	}
	switch r := reply.(type) {
	case *sessiondv1.CreateSessionResponse:
		return !r.GetCreated()
	case *sessiondv1.ImportSessionResponse:
		return !r.GetCreated()
	}
	return false
}

// setSessionID sets the session id of a request fillIDs drew one for.
func setSessionID(req interface{}, id string) {
	switch r := req.(type) {
	case *sessiondv1.CreateSessionRequest:
		r.SessionId = &id
	case *sessiondv1.ForkSessionRequest:
		r.SessionId = &id
	case *sessiondv1.ImportSessionRequest:
		r.SessionId = &id
	}
}

// fillImport fixes what the server would choose for an import, so that a
// retry sends the same log (and the server answers it as already imported).
func fillImport(r *sessiondv1.ImportSessionRequest) (changed, drew bool) {
	if r.SessionId == nil {
		id := ""
		if len(r.GetEntries()) > 0 {
			id = r.GetEntries()[0].GetSessionInfo().GetSessionId()
		}
		if id == "" {
			id = drawSessionID()
			drew = true
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
	return changed, drew
}
