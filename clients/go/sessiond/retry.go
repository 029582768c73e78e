package sessiond

import (
	"context"
	"math/rand"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// RetryPolicy says how often and how patiently unary calls are retried.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included (default 5;
	// 1 turns retries off).
	MaxAttempts int
	// BaseDelay is the first backoff, doubled after each attempt (default
	// 50 ms). Each wait is drawn from [d/2, d) so that clients cut off by
	// the same restart do not come back in lockstep.
	BaseDelay time.Duration
	// MaxDelay caps the backoff (default 2 s).
	MaxDelay time.Duration
}

// DefaultRetryPolicy is the policy Dial uses unless told otherwise; the
// TypeScript and Python clients use the same numbers.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 5, BaseDelay: 50 * time.Millisecond, MaxDelay: 2 * time.Second}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetryPolicy.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultRetryPolicy.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultRetryPolicy.MaxDelay
	}
	return p
}

// backoff is the wait before attempt+1 (attempt counts from 1).
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	if d > p.MaxDelay {
		d = p.MaxDelay
	}
	return jitter(d)
}

// jitterRand draws the jitter. Go before 1.20 seeds math/rand's global
// source with 1 in every process, so every client would draw the same
// "random" waits and come back in lockstep: seed a source of our own.
var jitterRand = struct {
	sync.Mutex
	*rand.Rand
}{Rand: rand.New(rand.NewSource(time.Now().UnixNano() ^ int64(os.Getpid())<<32))}

// jitter is a wait drawn from [d/2, d].
func jitter(d time.Duration) time.Duration {
	half := d / 2
	jitterRand.Lock()
	defer jitterRand.Unlock()
	return half + time.Duration(jitterRand.Int63n(int64(d-half)+1))
}

// retryable tells whether a failed attempt may be repeated: UNAVAILABLE (the
// server is restarting or shutting down, the connection was refused or
// lost), or CANCELED that the caller did not ask for (the peer reset the
// stream). ABORTED is a compare-and-swap conflict decided by the server:
// repeating it would fail the same way, and silently winning a race the
// caller lost would be worse.
func retryable(ctx context.Context, err error) bool {
	switch status.Code(err) {
	case codes.Unavailable:
		return true
	case codes.Canceled:
		return ctx.Err() == nil
	default:
		return false
	}
}

// neverSent tells whether a failure proves the request did not reach a
// server (no connection could be made), as opposed to one that may have
// been acted on before the reply was lost. grpc-go reports both as
// UNAVAILABLE; only the message tells them apart.
func neverSent(err error) bool {
	msg := status.Convert(err).Message()
	for _, s := range []string{"Error while dialing", "connection refused", "no such host", "produced zero addresses"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

const deleteSessionMethod = "/sessiond.v1.StoreService/DeleteSession"

// RetryInterceptor retries unary calls that failed with UNAVAILABLE (see
// retryable) with exponential backoff and jitter, up to p.MaxAttempts
// attempts, and never past ctx's deadline.
//
// Retrying is safe because IDsInterceptor has fixed every id before the
// first attempt: the server de-duplicates the repeats. DeleteSession has no
// id to de-duplicate by, so a DeleteSession that gets NOT_FOUND after an
// attempt whose outcome is unknown returns success with an empty response
// (no deleted ids: which ones the lost attempt removed is not known). The
// caller asked for the session to be gone, and it is. Likewise it tells
// IDsInterceptor (through ctx) when an attempt whose outcome is unknown was
// repeated, so that a created=false answer after it is taken for that
// attempt's session and not for another's (see IDsInterceptor).
//
// Streams are not retried here: Watcher resumes WatchEntries by seq.
func RetryInterceptor(p RetryPolicy) grpc.UnaryClientInterceptor {
	p = p.withDefaults()
	return func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		unknown := false
		for attempt := 1; ; attempt++ {
			err := invoker(ctx, method, req, reply, cc, opts...)
			if err == nil {
				return nil
			}
			if unknown && method == deleteSessionMethod && status.Code(err) == codes.NotFound {
				if m, ok := reply.(proto.Message); ok {
					proto.Reset(m)
				}
				return nil
			}
			if !retryable(ctx, err) || attempt >= p.MaxAttempts {
				return err
			}
			if !neverSent(err) {
				unknown = true
				markUnknownOutcome(ctx)
			}
			t := time.NewTimer(p.backoff(attempt))
			select {
			case <-ctx.Done():
				t.Stop()
				return err
			case <-t.C:
			}
		}
	}
}
