package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gantry-sched/gantry/pkg/view"
)

// DefaultAddress is where the dashboard listens unless told otherwise: this machine only.
const DefaultAddress = "127.0.0.1:8090"

// ListenAddress reads a bind address. A port alone (":8090") means this machine only,
// 127.0.0.1: the dashboard shows every workload and node of the cluster, so exposing it
// takes an explicit host such as 0.0.0.0:8090.
func ListenAddress(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("dashboard address %q: want HOST:PORT or :PORT, e.g. 127.0.0.1:8090: %v", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server serves a handler on an address until its context ends. It is a
// controller-runtime Runnable (Start) that runs on every replica, leader or not.
type Server struct {
	Addr    string
	Handler http.Handler
	// Background, when set, runs beside the server for as long as it serves (a Live
	// source's Poll, which fills the history while no page is open).
	Background func(ctx context.Context) error
	// Ready, when set, is told the address the server listens on (port 0 picks one).
	Ready func(addr string)
}

// NewLiveServer is the dashboard of a live cluster on addr: read is called for every
// page and every Refresh in the background, to keep the charts' history.
func NewLiveServer(addr string, read func(context.Context) (view.Snapshot, error), opts LiveOptions) (*Server, error) {
	bind, err := ListenAddress(addr)
	if err != nil {
		return nil, err
	}
	live := NewLive(read, opts)
	h, err := New(live, Options{})
	if err != nil {
		return nil, err
	}
	every := live.opts.SampleEvery
	return &Server{Addr: bind, Handler: h, Background: func(ctx context.Context) error { return live.Poll(ctx, every) }}, nil
}

// NeedLeaderElection tells controller-runtime to run the dashboard on every replica: it
// only reads.
func (s *Server) NeedLeaderElection() bool { return false }

// Start listens on s.Addr and serves until ctx ends, then shuts down gracefully.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("dashboard: listen %s: %w", s.Addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	if s.Ready != nil {
		s.Ready(ln.Addr().String())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.Background != nil {
		go func() { _ = s.Background(ctx) }()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("dashboard: serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutdown, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dashboard: shutdown: %w", err)
	}
	return nil
}
