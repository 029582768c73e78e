package sessiond

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Watcher is a WatchEntries stream that survives disconnects and server
// restarts. It remembers the seq of the last entry it delivered and, when
// the stream breaks, reconnects with after_seq set to it, so that Next
// returns every entry exactly once and in seq order. Heartbeats are passed
// through (they tell the caller the head seq while nothing happens).
//
// A Watcher is not safe for concurrent calls of Next; Close may be called
// from any goroutine.
type Watcher struct {
	client *Client
	ctx    context.Context
	cancel context.CancelFunc
	req    *sessiondv1.WatchEntriesRequest
	last   uint64
	stream sessiondv1.SessionService_WatchEntriesClient

	base, delay, maxDelay time.Duration
	onReconnect           func(err error, afterSeq uint64)
	reconnects            int
	mu                    sync.Mutex
}

// WatchOption configures WatchEntries.
type WatchOption func(*Watcher)

// WithReconnectDelay sets the backoff between reconnects: first base, then
// doubling up to maxDelay (defaults 100 ms and 5 s), each drawn from
// [d/2, d).
func WithReconnectDelay(base, maxDelay time.Duration) WatchOption {
	return func(w *Watcher) {
		if base > 0 {
			w.base = base
		}
		if maxDelay > 0 {
			w.maxDelay = maxDelay
		}
	}
}

// OnReconnect is called with the error that broke the stream and the
// after_seq the Watcher resumes from, before each reconnect (for logging).
func OnReconnect(f func(err error, afterSeq uint64)) WatchOption {
	return func(w *Watcher) { w.onReconnect = f }
}

// resumable are the codes after which a watch is resumed rather than ended:
// the stream broke (server restart or shutdown, connection lost, a proxy
// timing out), not the session. CANCELED and DEADLINE_EXCEEDED count only
// when the caller's context is still live (Next checks that first).
// NOT_FOUND (the session was deleted) and every other code end the watch.
var resumable = map[codes.Code]bool{
	codes.Unavailable:      true,
	codes.Internal:         true,
	codes.Unknown:          true,
	codes.DeadlineExceeded: true,
	codes.Aborted:          true,
	codes.Canceled:         true,
}

// WatchEntries starts a resumable watch of req.Session from req.AfterSeq
// (0 = the whole log). The stream is opened by the first Next. Close the
// Watcher (or cancel ctx) when done with it: until then its stream stays
// open on the server.
func (c *Client) WatchEntries(ctx context.Context, req *sessiondv1.WatchEntriesRequest, opts ...WatchOption) *Watcher {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{
		client:   c,
		ctx:      ctx,
		cancel:   cancel,
		req:      proto.Clone(req).(*sessiondv1.WatchEntriesRequest),
		last:     req.GetAfterSeq(),
		base:     100 * time.Millisecond,
		maxDelay: 5 * time.Second,
	}
	for _, o := range opts {
		o(w)
	}
	w.delay = w.base
	return w
}

// Next returns the next entry or heartbeat. It blocks until one arrives,
// reconnecting as often as needed. It returns an error only when the watch
// is over: a gRPC status error with code NOT_FOUND when the session was
// deleted, CANCELED / DEADLINE_EXCEEDED when ctx is done or Close was
// called, or the code of any other failure that is not a broken stream.
func (w *Watcher) Next() (*sessiondv1.WatchEntriesResponse, error) {
	for {
		if err := w.ctx.Err(); err != nil {
			return nil, status.FromContextError(err).Err()
		}
		if w.stream == nil {
			req := proto.Clone(w.req).(*sessiondv1.WatchEntriesRequest)
			req.AfterSeq = w.last
			s, err := w.client.Session.WatchEntries(w.ctx, req)
			if err != nil {
				if err := w.broken(err); err != nil {
					return nil, err
				}
				continue
			}
			w.stream = s
		}
		msg, err := w.stream.Recv()
		if err == io.EOF {
			// A clean end (a proxy closing the stream): resume after a pause.
			w.stream = nil
			w.sleep(w.delay)
			continue
		}
		if err != nil {
			w.stream = nil
			if err := w.broken(err); err != nil {
				return nil, err
			}
			continue
		}
		w.delay = w.base
		if e := msg.GetEntry(); e != nil {
			if e.GetSeq() <= w.last {
				continue // replayed by the server after a resume race
			}
			w.last = e.GetSeq()
		}
		return msg, nil
	}
}

// broken handles a failed stream: nil means "reconnect", an error ends the
// watch.
func (w *Watcher) broken(err error) error {
	if w.ctx.Err() != nil {
		return status.FromContextError(w.ctx.Err()).Err()
	}
	if !resumable[status.Code(err)] {
		return err
	}
	w.mu.Lock()
	w.reconnects++
	w.mu.Unlock()
	if w.onReconnect != nil {
		w.onReconnect(err, w.last)
	}
	w.sleep(jitter(w.delay))
	w.delay *= 2
	if w.delay > w.maxDelay {
		w.delay = w.maxDelay
	}
	return nil
}

// sleep waits d or until the watch is closed.
func (w *Watcher) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.ctx.Done():
	case <-t.C:
	}
}

// LastSeq is the seq of the last entry Next returned (or the starting
// after_seq): resume from it with a new watch to miss nothing.
func (w *Watcher) LastSeq() uint64 { return w.last }

// Reconnects counts how often the stream broke and was resumed.
func (w *Watcher) Reconnects() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reconnects
}

// Close ends the watch and its stream; a blocked Next returns CANCELED.
func (w *Watcher) Close() { w.cancel() }
