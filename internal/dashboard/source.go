package dashboard

import (
	"context"
	"io"
	"time"

	"github.com/gantry-sched/gantry/pkg/view"
)

// Source is what the dashboard renders: snapshots, the moments it can show, and charts.
// Implementations are safe for concurrent use (every request calls them).
type Source interface {
	// Snapshot is the scheduler at simulated time at (a source whose Timeline is
	// seekable) or now (a live cluster, which ignores at).
	Snapshot(ctx context.Context, at time.Duration) (view.Snapshot, error)
	// Timeline says which moments the source can show.
	Timeline() Timeline
	// WriteCharts writes the chart figures (inline SVG in HTML) of the whole run or of
	// the history kept so far.
	WriteCharts(ctx context.Context, w io.Writer) error
}

// Timeline is the range of moments a source can show. A simulation is seekable from 0 to
// End and shows Default when the request names no time; a live cluster shows only now
// and its pages reload every Refresh.
type Timeline struct {
	Seekable bool
	End      time.Duration
	Default  time.Duration
	Refresh  time.Duration
}
