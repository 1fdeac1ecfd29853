package dashboard

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/view"
)

// fakeClock is a wall clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestLiveSamplesAtMostEverySampleEvery(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	reads := 0
	l := NewLive(func(context.Context) (view.Snapshot, error) {
		reads++
		return testSnapshot(), nil
	}, LiveOptions{Now: clock.now, SampleEvery: 10 * time.Second, MaxSamples: 3})
	for _, step := range []time.Duration{0, 4 * time.Second, 6 * time.Second, 10 * time.Second, 10 * time.Second, 10 * time.Second} {
		clock.t = clock.t.Add(step)
		if _, err := l.Snapshot(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
	if reads != 6 {
		t.Errorf("%d reads, want one per Snapshot (6)", reads)
	}
	got := l.Samples()
	// Reads at 0s, 4s, 10s, 20s, 30s, 40s: samples at 0s, 10s, 20s, 30s, 40s (4s is too
	// soon after 0s); the bound keeps the last three.
	if len(got) != 3 {
		t.Fatalf("%d samples, want 3 (MaxSamples)", len(got))
	}
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for i, want := range []time.Duration{20 * time.Second, 30 * time.Second, 40 * time.Second} {
		if got[i].At.Sub(start) != want {
			t.Errorf("sample %d at %s, want %s", i, got[i].At.Sub(start), want)
		}
	}
}

func TestLiveReadErrorIsNotSampled(t *testing.T) {
	l := NewLive(func(context.Context) (view.Snapshot, error) { return view.Snapshot{}, errors.New("apiserver down") }, LiveOptions{})
	if _, err := l.Snapshot(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "apiserver down") {
		t.Fatalf("error %v, want the read's", err)
	}
	if n := len(l.Samples()); n != 0 {
		t.Errorf("%d samples after a failed read", n)
	}
}

func TestSampleOfTestCluster(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := sampleOf(testSnapshot(), at)
	// Healthy GPUs on ready nodes: a100-shared-0 1, h100-full-0 7 (GPU 7 unhealthy),
	// h100-mig-0 2; a100-spot-1 is not ready.
	want := Sample{At: at, Capacity: 10000, Allocated: 500 + 4000 + 427, Pending: 3,
		MeanWait: (10*time.Minute + 5*time.Minute + time.Minute) / 3, MaxWait: 10 * time.Minute}
	// Pending pods: 8000 (llm-pretrain), 1000 (sweep-1), 1000 (sweep-2) milli-GPU each.
	// h100-full-0 has 3 free whole GPUs (4-6; 7 is unhealthy), which the 1-GPU pods fit;
	// no pending pod fits in a free MIG instance (h100-mig-0: a 1g and the 3g of GPU 0,
	// all of GPU 1) or a free replica (two of a100-shared-0).
	want.Stranded = (142 + 428) + (142 + 142 + 285 + 428) + 2*250
	if s != want {
		t.Fatalf("sample\n%+v\nwant\n%+v", s, want)
	}
}

func TestStranded(t *testing.T) {
	node := view.Node{Name: "n", Ready: true, GPUs: []view.GPU{
		migGPU("n", 0, [4]string{"", "", "", ""}),
		wholeGPU("n", 1, ""),
		wholeGPU("n", 2, "x/y"),
	}}
	down := node
	down.Ready = false
	for _, tc := range []struct {
		name    string
		nodes   []view.Node
		demands []resources.MilliGPU
		want    resources.MilliGPU
	}{
		{"nothing pending strands nothing", []view.Node{node}, nil, 0},
		{"a 1g pod fits the 1g and bigger slices and the whole GPU", []view.Node{node}, []resources.MilliGPU{142}, 0},
		{"a 3g pod strands the smaller slices", []view.Node{node}, []resources.MilliGPU{428}, 142 + 142 + 285},
		{"a 1-GPU pod strands every MIG slice", []view.Node{node}, []resources.MilliGPU{1000}, 997},
		{"a 2-GPU pod fits no node with one whole free GPU", []view.Node{node}, []resources.MilliGPU{2000}, 997 + 1000},
		{"a node that is not ready counts for nothing", []view.Node{down}, []resources.MilliGPU{2000}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stranded(tc.nodes, tc.demands); got != tc.want {
				t.Errorf("stranded %d, want %d", got, tc.want)
			}
		})
	}
}

func TestLiveCharts(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	snap := testSnapshot()
	l := NewLive(func(context.Context) (view.Snapshot, error) { return snap, nil }, LiveOptions{Now: clock.now})
	var empty bytes.Buffer
	if err := l.WriteCharts(context.Background(), &empty); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(empty.String(), "No sample yet") {
		t.Errorf("charts without samples: %s", empty.String())
	}
	for i := 0; i < 3; i++ {
		if _, err := l.Snapshot(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		clock.t = clock.t.Add(time.Minute)
		snap.Workloads = snap.Workloads[1:] // one pending workload fewer each minute
	}
	var buf bytes.Buffer
	if err := l.WriteCharts(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{`id="chart-live-allocation"`, `id="chart-live-capacity"`, `id="chart-live-pending"`, `id="chart-live-wait"`,
		"time since 2026-01-01 12:00:00 UTC", `data-x-tick="120000000000"`, `data-series="max wait"`} {
		if !strings.Contains(out, want) {
			t.Errorf("live charts lack %q", want)
		}
	}
}

func TestLiveTimelineIsNotSeekable(t *testing.T) {
	l := NewLive(func(context.Context) (view.Snapshot, error) { return testSnapshot(), nil }, LiveOptions{Refresh: 5 * time.Second})
	srv := serve(t, l)
	status, _, body := get(t, srv, "GET", "/?at=5m")
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	for _, want := range []string{`<meta http-equiv="refresh" content="5">`, "reloads every 5s", "read at "} {
		if !strings.Contains(body, want) {
			t.Errorf("live page lacks %q", want)
		}
	}
	if strings.Contains(body, `id="time-control"`) {
		t.Error("a live page has the simulation's time control")
	}
}
