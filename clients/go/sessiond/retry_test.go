package sessiond

import (
	"context"
	"testing"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// runRetry calls RetryInterceptor around an invoker that fails with errs in
// turn and then succeeds, and returns how often it was called.
func runRetry(ctx context.Context, method string, reply interface{}, errs ...error) (int, error) {
	calls := 0
	invoker := func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
		calls++
		if calls <= len(errs) {
			return errs[calls-1]
		}
		if r, ok := reply.(*sessiondv1.DeleteSessionResponse); ok {
			r.DeletedSessionIds = []string{"from-the-server"}
		}
		return nil
	}
	fast := RetryPolicy{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}
	err := RetryInterceptor(fast)(ctx, method, nil, reply, nil, invoker)
	return calls, err
}

var (
	lost    = status.Error(codes.Unavailable, "transport is closing")
	refused = status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing dial tcp 127.0.0.1:1: connect: connection refused"`)
	gone    = status.Error(codes.NotFound, `session "s" not found`)
)

func TestRetryRepeatsUnavailableThenSucceeds(t *testing.T) {
	calls, err := runRetry(context.Background(), "/sessiond.v1.SessionService/Append", nil, lost, refused)
	if err != nil || calls != 3 {
		t.Fatalf("calls=%d err=%v, want 3 calls and success", calls, err)
	}
}

func TestRetryLeavesAbortedAndOtherCodesAlone(t *testing.T) {
	for _, c := range []codes.Code{codes.Aborted, codes.Internal, codes.InvalidArgument, codes.NotFound, codes.DeadlineExceeded} {
		calls, err := runRetry(context.Background(), "/sessiond.v1.SessionService/Append", nil, status.Error(c, "no"))
		if calls != 1 || status.Code(err) != c {
			t.Fatalf("%v: calls=%d err=%v, want 1 call and the same code", c, calls, err)
		}
	}
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	calls, err := runRetry(context.Background(), "/sessiond.v1.SessionService/Append", nil, lost, lost, lost, lost, lost, lost)
	if calls != 5 || status.Code(err) != codes.Unavailable {
		t.Fatalf("calls=%d err=%v, want 5 calls and UNAVAILABLE", calls, err)
	}
}

func TestRetryRepeatsCanceledOnlyWhenTheCallerDidNot(t *testing.T) {
	peerReset := status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL")
	if calls, err := runRetry(context.Background(), "/m", nil, peerReset); calls != 2 || err != nil {
		t.Fatalf("peer reset: calls=%d err=%v, want a retry", calls, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if calls, err := runRetry(ctx, "/m", nil, peerReset); calls != 1 || status.Code(err) != codes.Canceled {
		t.Fatalf("caller canceled: calls=%d err=%v, want no retry", calls, err)
	}
}

func TestRetriedDeleteAfterUnknownOutcomeSucceedsOnNotFound(t *testing.T) {
	reply := &sessiondv1.DeleteSessionResponse{DeletedSessionIds: []string{"stale"}}
	calls, err := runRetry(context.Background(), deleteSessionMethod, reply, lost, gone)
	if err != nil || calls != 2 || len(reply.DeletedSessionIds) != 0 {
		t.Fatalf("calls=%d err=%v deleted=%v, want success with no ids", calls, err, reply.DeletedSessionIds)
	}
}

func TestDeleteNotFoundStaysNotFoundUnlessAnAttemptMayHaveDeleted(t *testing.T) {
	reply := &sessiondv1.DeleteSessionResponse{}
	if calls, err := runRetry(context.Background(), deleteSessionMethod, reply, gone); calls != 1 || status.Code(err) != codes.NotFound {
		t.Fatalf("first attempt NOT_FOUND: calls=%d err=%v", calls, err)
	}
	if calls, err := runRetry(context.Background(), deleteSessionMethod, reply, refused, gone); calls != 2 || status.Code(err) != codes.NotFound {
		t.Fatalf("never sent, then NOT_FOUND: calls=%d err=%v, want NOT_FOUND", calls, err)
	}
	if _, err := runRetry(context.Background(), "/sessiond.v1.SessionService/Append", nil, lost, gone); status.Code(err) != codes.NotFound {
		t.Fatalf("Append lost, then NOT_FOUND: err=%v, want NOT_FOUND", err)
	}
}

func TestBackoffGrowsWithJitterUpToTheCap(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 9, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	drawn := map[time.Duration]bool{}
	for i := 0; i < 20; i++ {
		drawn[p.backoff(1)] = true
	}
	if len(drawn) < 2 {
		t.Fatalf("20 backoffs drew the same wait %v: no jitter", drawn)
	}
	for attempt, full := range map[int]time.Duration{1: 100, 2: 200, 3: 400, 4: 800, 5: 1000, 8: 1000} {
		full *= time.Millisecond
		for i := 0; i < 50; i++ {
			if d := p.backoff(attempt); d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt, d, full/2, full)
			}
		}
	}
}

func TestRetryStopsWaitingWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	slow := RetryPolicy{MaxAttempts: 5, BaseDelay: 10 * time.Second, MaxDelay: 10 * time.Second}
	calls := 0
	invoker := func(context.Context, string, interface{}, interface{}, *grpc.ClientConn, ...grpc.CallOption) error {
		calls++
		return lost
	}
	start := time.Now()
	err := RetryInterceptor(slow)(ctx, "/m", nil, nil, nil, invoker)
	if calls != 1 || status.Code(err) != codes.Unavailable || time.Since(start) > 5*time.Second {
		t.Fatalf("calls=%d err=%v after %v, want the first error as soon as ctx ends", calls, err, time.Since(start))
	}
}
