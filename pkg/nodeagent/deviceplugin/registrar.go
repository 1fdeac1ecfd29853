package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// DefaultWatchInterval is how often Registrar looks at the kubelet's socket.
const DefaultWatchInterval = time.Second

// registerTimeout bounds one registration call, so a kubelet that accepts the connection
// but never answers does not stall the watch.
const registerTimeout = 10 * time.Second

// Registrar keeps a node's plugin servers registered with the kubelet. A kubelet that
// restarts empties its device-plugin directory (our sockets included) and recreates
// kubelet.sock; it forgets every plugin until each registers again. Registrar notices a
// new kubelet.sock and restarts and re-registers every server, as NVIDIA's plugin does.
//
// It polls the socket's identity (file and modification time) instead of using inotify:
// the same code sees a socket deleted and recreated between two looks (a new file or a
// new time), a kubelet directory mounted from the host, and a kubelet that was not yet
// up when the agent started; a second of delay is nothing next to a kubelet restart.
type Registrar struct {
	servers       []*Server
	kubeletSocket string
	every         time.Duration
	report        func(error)
}

// NewRegistrar keeps servers registered with the kubelet at kubeletSocket, looking every
// interval (DefaultWatchInterval when 0). report receives each failed attempt (nil
// discards them); the next look tries again.
func NewRegistrar(servers []*Server, kubeletSocket string, every time.Duration, report func(error)) *Registrar {
	if every <= 0 {
		every = DefaultWatchInterval
	}
	if report == nil {
		report = func(error) {}
	}
	return &Registrar{servers: servers, kubeletSocket: kubeletSocket, every: every, report: report}
}

// Run starts and registers the servers as soon as the kubelet's socket exists and again
// each time it is replaced, until ctx ends; then it stops them. registered, when not
// nil, is called after each complete registration (for logs and tests).
func (r *Registrar) Run(ctx context.Context, registered func()) {
	defer r.stopAll()
	t := time.NewTicker(r.every)
	defer t.Stop()
	var current os.FileInfo // the kubelet socket the servers are registered with
	for {
		fi, err := os.Stat(r.kubeletSocket)
		switch {
		case err != nil:
			current = nil // the kubelet is gone: register with whichever comes next
		case current == nil || replaced(current, fi):
			if err := r.restart(ctx); err != nil {
				r.report(err)
			} else {
				current = fi
				if registered != nil {
					registered()
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// replaced reports whether the socket file is not the one seen before.
func replaced(before, now os.FileInfo) bool {
	return !os.SameFile(before, now) || !before.ModTime().Equal(now.ModTime())
}

// restart stops every server, starts it on a fresh socket and registers it.
func (r *Registrar) restart(ctx context.Context) error {
	r.stopAll()
	var errs []error
	for _, s := range r.servers {
		if err := s.Start(); err != nil {
			errs = append(errs, err)
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, registerTimeout)
		err := s.Register(rctx, r.kubeletSocket)
		cancel()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("registering with the kubelet at %s: %w", r.kubeletSocket, err)
	}
	return nil
}

func (r *Registrar) stopAll() {
	for _, s := range r.servers {
		s.Stop()
	}
}
