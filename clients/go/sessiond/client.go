package sessiond

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
)

// Client holds the generated clients of both services over one connection.
// Store and Session are the sessiondv1 interfaces: every RPC and message of
// the proto is there, unchanged; what this package adds happens in the
// connection's interceptors (ids before send, retry, blobs resolved and
// uploaded) and in WatchEntries.
//
// Blobs: over a connection made by Dial (or with DialOptions), GetState,
// GetEntries and WatchEntries answers (and so ReadState and the Watcher)
// hold the parts the server keeps as blobs, not references to them, unless
// WithBlobRefs was given; Append and ImportSession upload parts larger than
// WithUploadPartsOver's size first and send references when the request
// could not carry them (they add up to more than half the max send message
// size; the largest go first). The same stubs over any other
// connection are the bare generated clients: their answers carry
// ContentPart.blob references (read them with GetBlob) and their requests
// go as they are.
type Client struct {
	Store   sessiondv1.StoreServiceClient
	Session sessiondv1.SessionServiceClient

	conn grpc.ClientConnInterface
}

// New wraps a connection. The ids-before-send and retry guarantees live in
// the connection's interceptors: pass a connection made by Dial, or one
// dialed with the options DialOptions returns. A bare grpc.ClientConn works
// too, without them (and without blobs resolved or uploaded: its answers
// carry BlobRef parts).
func New(conn grpc.ClientConnInterface) *Client {
	return &Client{
		Store:   sessiondv1.NewStoreServiceClient(conn),
		Session: sessiondv1.NewSessionServiceClient(conn),
		conn:    conn,
	}
}

// Dial connects to a sessiond server at target (host:port, e.g.
// "127.0.0.1:50051") and returns a Client whose connection fills ids before
// send and retries UNAVAILABLE. Without WithTLS the connection is plaintext
// HTTP/2 (what `sessiond serve` speaks unless given --tls-cert). Dial does
// not wait for the connection: the first call does (and is retried while
// the server is unreachable).
// ctx is not used (grpc.NewClient connects lazily); it stays for callers
// of the earlier DialContext-based Dial.
func Dial(_ context.Context, target string, opts ...Option) (*Client, error) {
	dialOpts, err := DialOptions(opts...)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return nil, err
	}
	return New(conn), nil
}

// Close closes the connection when the Client made it (Dial) or was given
// one that can be closed.
func (c *Client) Close() error {
	if cl, ok := c.conn.(interface{ Close() error }); ok {
		return cl.Close()
	}
	return nil
}

// Conn is the underlying connection.
func (c *Client) Conn() grpc.ClientConnInterface { return c.conn }

// Option configures Dial and DialOptions.
type Option func(*config) error

type config struct {
	token        string
	tls          *tls.Config
	retry        RetryPolicy
	noRetry      bool
	callTimeout  time.Duration
	interceptors []grpc.UnaryClientInterceptor
	dial         []grpc.DialOption
	keepalive    *keepalive.ClientParameters

	blobRefs       bool
	uploadOver     int
	blobCacheBytes int64
}

// DefaultKeepalive is the HTTP/2 keepalive Dial uses unless told otherwise.
// A connection that dies without a word (the server's host lost power, a NAT
// or proxy dropped it) sends no FIN and no RST, and a call on it, a watch
// above all, would wait forever. So while calls are open and nothing has
// arrived for Time, grpc-go sends a PING; no answer within Timeout closes
// the connection, its calls fail with UNAVAILABLE, and WatchEntries and the
// retry of unary calls go on over a new one. A watch's heartbeats are
// traffic, so a healthy watch is never pinged; an idle connection is not
// pinged either (PermitWithoutStream false). grpc-go does not ping more
// often than every 10 s.
var DefaultKeepalive = keepalive.ClientParameters{Time: 20 * time.Second, Timeout: 10 * time.Second}

// WithKeepalive sets the keepalive: a PING after `every` of silence while calls
// are open, the connection closed when it goes unanswered for timeout
// (grpc-go raises an `every` under 10 s to 10 s).
func WithKeepalive(every, timeout time.Duration) Option {
	return func(c *config) error {
		if every <= 0 || timeout <= 0 {
			return errors.New("sessiond: WithKeepalive: time and timeout must be positive")
		}
		c.keepalive = &keepalive.ClientParameters{Time: every, Timeout: timeout}
		return nil
	}
}

// WithoutKeepalive sends no PING: a call on a connection that died without
// closing then waits for its deadline, and a watch forever.
func WithoutKeepalive() Option {
	return func(c *config) error {
		c.keepalive = &keepalive.ClientParameters{}
		return nil
	}
}

// WithToken sends `authorization: Bearer <token>` on every call (unary and
// streaming), as servers started with --auth-tokens require. It is sent on
// plaintext connections too, because sessiond is commonly served on
// loopback without TLS; use WithTLS for anything else.
func WithToken(token string) Option {
	return func(c *config) error {
		if token == "" {
			return errors.New("sessiond: WithToken: empty token")
		}
		c.token = token
		return nil
	}
}

// WithTLS connects over TLS, trusting the CA certificates in caPEM (PEM),
// or the system's roots when caPEM is nil.
func WithTLS(caPEM []byte) Option {
	return func(c *config) error {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if caPEM != nil {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(caPEM) {
				return errors.New("sessiond: WithTLS: no certificate found in the CA PEM")
			}
			cfg.RootCAs = pool
		}
		c.tls = cfg
		return nil
	}
}

// WithTLSConfig connects over TLS with a config of your own (e.g. a client
// certificate for a server started with --tls-client-ca).
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *config) error {
		c.tls = cfg
		return nil
	}
}

// WithRetry sets the retry policy of unary calls (see RetryInterceptor);
// maxAttempts counts the first attempt, base is the first backoff and
// maxDelay its cap. Zero values take the defaults (5, 50 ms, 2 s).
func WithRetry(maxAttempts int, base, maxDelay time.Duration) Option {
	return func(c *config) error {
		c.retry = RetryPolicy{MaxAttempts: maxAttempts, BaseDelay: base, MaxDelay: maxDelay}
		return nil
	}
}

// WithoutRetry turns the retry of unary calls off (ids are still filled).
func WithoutRetry() Option {
	return func(c *config) error {
		c.noRetry = true
		return nil
	}
}

// WithCallTimeout gives every unary call that has no deadline of its own
// one of d, retries included. Watch streams get none: a deadline would end
// every watch after d, which is never what a watcher wants.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return errors.New("sessiond: WithCallTimeout: the timeout must be positive")
		}
		c.callTimeout = d
		return nil
	}
}

// WithUnaryInterceptors adds interceptors that run inside the ids and retry
// interceptors, once per attempt (e.g. logging, metrics).
func WithUnaryInterceptors(i ...grpc.UnaryClientInterceptor) Option {
	return func(c *config) error {
		c.interceptors = append(c.interceptors, i...)
		return nil
	}
}

// WithDialOptions passes grpc dial options through (keepalive, a dialer,
// message size limits, ...).
func WithDialOptions(o ...grpc.DialOption) Option {
	return func(c *config) error {
		c.dial = append(c.dial, o...)
		return nil
	}
}

// DialOptions returns the grpc dial options Dial uses, for callers that make
// the connection themselves: grpc.NewClient(target,
// sessiond.DialOptions(...)...) and then New(conn). Each call makes its own
// blob cache (see WithBlobCacheBytes), kept by the connection dialed with
// its options.
func DialOptions(opts ...Option) ([]grpc.DialOption, error) {
	ka := DefaultKeepalive
	c := config{
		retry:          DefaultRetryPolicy,
		keepalive:      &ka,
		uploadOver:     DefaultUploadPartsOver,
		blobCacheBytes: DefaultBlobCacheBytes,
	}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	var out []grpc.DialOption
	if c.tls != nil {
		out = append(out, grpc.WithTransportCredentials(credentials.NewTLS(c.tls)))
	} else {
		out = append(out, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if c.token != "" {
		out = append(out, grpc.WithPerRPCCredentials(bearer{token: c.token}))
	}
	if c.keepalive.Time > 0 {
		out = append(out, grpc.WithKeepaliveParams(*c.keepalive))
	}
	chain := []grpc.UnaryClientInterceptor{TraceUnaryInterceptor()}
	if c.callTimeout > 0 {
		chain = append(chain, timeoutInterceptor(c.callTimeout))
	}
	chain = append(chain, IDsInterceptor())
	streams := []grpc.StreamClientInterceptor{TraceStreamInterceptor()}
	// After the ids (filled into the caller's request, which the upload
	// copies), before the retry (parts uploaded once, references resolved
	// once); its own GetBlob and PutBlob calls go through the whole chain.
	if b := newBlobs(&c); b != nil {
		chain = append(chain, b.unary)
		streams = append(streams, b.stream)
	}
	if !c.noRetry {
		chain = append(chain, RetryInterceptor(c.retry))
	}
	chain = append(chain, c.interceptors...)
	out = append(out, grpc.WithChainUnaryInterceptor(chain...))
	out = append(out, grpc.WithChainStreamInterceptor(streams...))
	return append(out, c.dial...), nil
}

// bearer is the per-RPC credential of WithToken.
type bearer struct{ token string }

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false so that a token also works against a
// server on loopback without TLS; grpc-go would otherwise refuse to send it.
func (b bearer) RequireTransportSecurity() bool { return false }

// timeoutInterceptor applies WithCallTimeout (outermost, so that the
// deadline covers every attempt).
func timeoutInterceptor(d time.Duration) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
