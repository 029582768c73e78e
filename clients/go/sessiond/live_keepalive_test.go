package sessiond

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// freezingProxy forwards TCP to target until freeze: from then on its open
// connections carry nothing, both ways, and stay open (no FIN, no RST), as a
// connection does when the server's host is lost or a NAT drops it. New
// connections are forwarded as before.
type freezingProxy struct {
	ln       net.Listener
	mu       sync.Mutex
	links    []*link
	accepted int
}

// link is one proxied connection; frozen is read and set under the proxy's mu.
type link struct {
	client, upstream net.Conn
	frozen           bool
}

func startFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &freezingProxy{ln: ln}
	go p.serve(target)
	t.Cleanup(p.close)
	return p
}

func (p *freezingProxy) serve(target string) {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		l := &link{client: c, upstream: up}
		p.mu.Lock()
		p.accepted++
		p.links = append(p.links, l)
		p.mu.Unlock()
		go p.pipe(l, c, up)
		go p.pipe(l, up, c)
	}
}

func (p *freezingProxy) pipe(l *link, from, to net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		drop := l.frozen
		p.mu.Unlock()
		if drop {
			continue // read and thrown away: the peer sees silence, not an error
		}
		if _, err := to.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (p *freezingProxy) freeze() {
	p.mu.Lock()
	for _, l := range p.links {
		l.frozen = true
	}
	p.mu.Unlock()
}

func (p *freezingProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.client.Close()
		l.upstream.Close()
	}
}

// A watch over a connection that goes silent without closing: the keepalive
// PING goes unanswered, grpc-go closes the connection, and the watch resumes
// on a new one with no gap and no duplicate. grpc-go pings after 10 s of
// silence at the earliest, so this test takes about 11 s.
func TestLiveKeepaliveFindsADeadConnection(t *testing.T) {
	direct := live(t)
	addr := os.Getenv("SESSIOND_ADDR")
	p := startFreezingProxy(t, addr)
	opts := []Option{WithKeepalive(10*time.Second, time.Second)}
	if tok := os.Getenv("SESSIOND_TOKEN"); tok != "" {
		opts = append(opts, WithToken(tok))
	}
	viaProxy, err := Dial(context.Background(), p.ln.Addr().String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer viaProxy.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	id := newSession(t, direct)
	appendOne := func(text string) string {
		e := UserText(text)
		if _, err := direct.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{e}}); err != nil {
			t.Fatal(err)
		}
		return e.Id
	}
	var reasons []codes.Code
	w := viaProxy.WatchEntries(ctx, &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: id},
		WithReconnectDelay(50*time.Millisecond, 500*time.Millisecond),
		OnReconnect(func(err error, after uint64) { reasons = append(reasons, status.Code(err)) }))
	defer w.Close()
	var got []string
	until := func(id string) {
		for {
			ev, err := w.Next()
			if err != nil {
				t.Fatalf("watch ended: %v (after %v)", err, got)
			}
			if e := ev.GetEntry(); e != nil {
				got = append(got, e.Id)
				if e.Id == id {
					return
				}
			}
		}
	}
	a := appendOne("before the freeze")
	until(a)
	p.freeze()
	b1 := appendOne("after 1")
	b2 := appendOne("after 2")
	start := time.Now()
	until(b2)
	if len(got) != 4 || got[1] != a || got[2] != b1 || got[3] != b2 {
		t.Fatalf("got %v, want [root %s %s %s]", got, a, b1, b2)
	}
	if len(reasons) == 0 || reasons[0] != codes.Unavailable {
		t.Fatalf("reconnects %v, want UNAVAILABLE first", reasons)
	}
	p.mu.Lock()
	accepted := p.accepted
	p.mu.Unlock()
	if accepted < 2 {
		t.Fatalf("the proxy accepted %d connections, want a new one after the freeze", accepted)
	}
	t.Logf("found dead and resumed %v after the freeze; reconnects %v", time.Since(start).Round(time.Millisecond), reasons)
}
