package sim

import (
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
)

func TestNoDurationWarning(t *testing.T) {
	wl := func(name string, d time.Duration) api.Workload {
		w := gt.MakeWorkload("ns", name).Queue("q").GPUs(1).Obj()
		w.Timing.Duration = d
		return *w
	}
	tests := []struct {
		name   string
		wls    []api.Workload
		want   string
		wantOK bool
	}{
		{name: "all have a duration", wls: []api.Workload{wl("a", time.Hour)}},
		{name: "no workloads"},
		{
			name:   "one without",
			wls:    []api.Workload{wl("a", time.Hour), wl("b", 0)},
			want:   "warning: 1 workload has no gantry.dev/duration annotation and never finishes once started: ns/b",
			wantOK: true,
		},
		{
			name:   "names sorted, the first three shown",
			wls:    []api.Workload{wl("e", 0), wl("d", 0), wl("c", time.Minute), wl("b", 0), wl("a", 0), wl("f", 0)},
			want:   "warning: 5 workloads have no gantry.dev/duration annotation and never finish once started: ns/a, ns/b, ns/d and 2 more",
			wantOK: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := NoDurationWarning(tt.wls)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %q, %v\nwant %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
