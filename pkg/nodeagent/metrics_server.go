package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsServer serves a registry on /metrics (and /healthz) until its context ends.
type MetricsServer struct {
	l   net.Listener
	srv *http.Server
}

// ListenMetrics binds addr now, so a port in use fails the agent at start rather than
// in a goroutine; Serve then answers on it.
func ListenMetrics(addr string, reg *prometheus.Registry) (*MetricsServer, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	return &MetricsServer{l: l, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// Addr is the bound address (with the port chosen when addr asked for port 0).
func (s *MetricsServer) Addr() string { return s.l.Addr().String() }

// Serve answers until ctx ends, then shuts the server down (waiting up to five seconds
// for scrapes in flight).
func (s *MetricsServer) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.l) }()
	select {
	case err := <-done:
		return fmt.Errorf("metrics server on %s: %w", s.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("metrics server on %s: %w", s.Addr(), err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server on %s: %w", s.Addr(), err)
	}
	return nil
}
