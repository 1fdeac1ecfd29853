package dashboard

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/view"
)

// LiveOptions configure a Live source. Zero values take the defaults.
type LiveOptions struct {
	// Now is the wall clock (injected so tests decide when samples are taken).
	Now func() time.Time
	// Refresh is how often pages reload (default 10s).
	Refresh time.Duration
	// SampleEvery is the least time between two history samples (default 10s): pages
	// loaded more often do not crowd the history.
	SampleEvery time.Duration
	// MaxSamples bounds the history (default 720: two hours at 10s).
	MaxSamples int
}

// Live is the Source of a running cluster: every Snapshot reads the cluster through
// read (the controller's ReadView over a client.Reader) and adds a sample to a bounded
// history, which its charts draw.
type Live struct {
	read func(context.Context) (view.Snapshot, error)
	opts LiveOptions

	mu   sync.Mutex
	hist history
}

// NewLive serves the snapshots read returns.
func NewLive(read func(context.Context) (view.Snapshot, error), opts LiveOptions) *Live {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Refresh <= 0 {
		opts.Refresh = 10 * time.Second
	}
	if opts.SampleEvery <= 0 {
		opts.SampleEvery = 10 * time.Second
	}
	if opts.MaxSamples <= 0 {
		opts.MaxSamples = 720
	}
	return &Live{read: read, opts: opts, hist: history{max: opts.MaxSamples}}
}

// Timeline implements Source: only now, reloaded every Refresh.
func (l *Live) Timeline() Timeline { return Timeline{Refresh: l.opts.Refresh} }

// Snapshot implements Source: the cluster now (at is ignored), sampled into the history.
func (l *Live) Snapshot(ctx context.Context, _ time.Duration) (view.Snapshot, error) {
	s, err := l.read(ctx)
	if err != nil {
		return view.Snapshot{}, err
	}
	now := l.opts.Now()
	if s.At.IsZero() {
		s.At = now
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if last, ok := l.hist.last(); !ok || now.Sub(last.At) >= l.opts.SampleEvery {
		l.hist.add(sampleOf(s, now))
	}
	return s, nil
}

// Poll reads the cluster every interval until ctx ends, so the history fills while no
// page is open. It returns ctx's error; a failed read is skipped (the next may succeed).
func (l *Live) Poll(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		_, _ = l.Snapshot(ctx, 0)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// WriteCharts implements Source with the history's charts.
func (l *Live) WriteCharts(_ context.Context, w io.Writer) error {
	l.mu.Lock()
	samples := l.hist.all()
	l.mu.Unlock()
	return writeHistoryCharts(w, samples)
}

// Samples returns the history, oldest first (a copy).
func (l *Live) Samples() []Sample {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hist.all()
}
