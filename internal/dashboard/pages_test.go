package dashboard

import (
	"context"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/view"
)

func TestGPUCellGeometry(t *testing.T) {
	fills := map[string]string{"a/x": "#111111"}
	for _, tc := range []struct {
		name           string
		gpu            view.GPU
		wantX, wantW   []int64
		wantKinds      []string
		unsetX, unsetW int64
	}{
		{"a whole GPU fills the bar", wholeGPU("n", 0, "a/x"), []int64{0}, []int64{150}, []string{"whole"}, 0, 0},
		{"MIG slices at their share, the rounding rest given to the last", migGPU("n", 0, [4]string{"a/x", "", "", ""}),
			[]int64{0, 21, 42, 85}, []int64{21, 21, 43, 65}, []string{"mig", "mig", "mig", "mig"}, 0, 0},
		{"replicas split the GPU evenly", sharedGPU("n", 0, [4]string{"a/x", "", "", ""}),
			[]int64{0, 37, 75, 112}, []int64{37, 38, 37, 38}, []string{"replica", "replica", "replica", "replica"}, 0, 0},
		{"MIG slices not laid out leave a gap", view.GPU{Devices: []view.Device{{ID: "m", Profile: "3g.40gb", Share: 428}}},
			[]int64{0}, []int64{64}, []string{"mig"}, 64, 86},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gpuCellOf("n", tc.gpu, fills)
			var xs, ws []int64
			var kinds []string
			for _, d := range c.Devices {
				xs, ws, kinds = append(xs, d.X), append(ws, d.W), append(kinds, d.Kind)
			}
			if !reflect.DeepEqual(xs, tc.wantX) || !reflect.DeepEqual(ws, tc.wantW) || !reflect.DeepEqual(kinds, tc.wantKinds) {
				t.Errorf("devices at x %v w %v kinds %v, want x %v w %v kinds %v", xs, ws, kinds, tc.wantX, tc.wantW, tc.wantKinds)
			}
			if c.UnsetX != tc.unsetX || c.UnsetW != tc.unsetW {
				t.Errorf("gap at %d width %d, want %d width %d", c.UnsetX, c.UnsetW, tc.unsetX, tc.unsetW)
			}
		})
	}
}

func TestNodesPage(t *testing.T) {
	p := buildNodes(testSnapshot())
	if p.MIG != 8 || p.Replicas != 4 || p.Whole != 10 {
		t.Errorf("drawn %d whole, %d MIG, %d replicas; want 10, 8, 4", p.Whole, p.MIG, p.Replicas)
	}
	var names []string
	for _, h := range p.Holders {
		names = append(names, h.Name)
	}
	want := []string{"team-a/llm-finetune", "team-b/inference", "team-b/notebook-1", "team-b/notebook-2"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("holders %v, want %v (sorted)", names, want)
	}
	if p.Holders[0].Devices != 4 || p.Holders[3].Devices != 2 {
		t.Errorf("device counts %d and %d, want 4 and 2", p.Holders[0].Devices, p.Holders[3].Devices)
	}
	seen := map[string]bool{}
	for _, h := range p.Holders {
		if seen[h.Fill] {
			t.Errorf("colour %s given twice", h.Fill)
		}
		seen[h.Fill] = true
	}
	mig := p.Nodes[3].GPUs[0].Devices
	if mig[0].Fill != p.Holders[2].Fill || !mig[1].Free || mig[1].Fill != "#ffffff" {
		t.Errorf("MIG devices coloured %s, %s (free %v)", mig[0].Fill, mig[1].Fill, mig[1].Free)
	}
	if want := "MIG-h100-mig-0-0-3 (mig 3g.40gb, 0.428 GPU): free"; mig[3].Title != want {
		t.Errorf("title %q, want %q", mig[3].Title, want)
	}
	if mig[3].Label != "3g.40gb" || mig[0].Label != "1g" {
		t.Errorf("labels %q and %q, want the profile where it fits and its slice count where not", mig[3].Label, mig[0].Label)
	}
}

func TestCohortTree(t *testing.T) {
	s := view.Snapshot{
		Cohorts: []view.Cohort{{Name: "root"}, {Name: "b", Parent: "root"}, {Name: "a", Parent: "root", Queues: []string{"q1"}},
			{Name: "orphan", Parent: "gone"}, {Name: "x", Parent: "y"}, {Name: "y", Parent: "x"}},
		Queues: []view.Queue{{Name: "q1", Cohort: "a"}, {Name: "q2", Cohort: "root", Held: true}, {Name: "q3"}},
	}
	tree, loose := cohortTree(s)
	var lines []string
	var walk func(n cohortNode, depth int)
	walk = func(n cohortNode, depth int) {
		line := strings.Repeat("  ", depth) + n.Name + ":"
		for _, q := range n.Queues {
			line += " " + q.Name
			if q.Held {
				line += "(held)"
			}
		}
		lines = append(lines, line)
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, n := range tree {
		walk(n, 0)
	}
	// "gone" is not in the snapshot: orphan is a root; x and y form a cycle, cut where it
	// would repeat.
	want := []string{"orphan:", "root: q2(held)", "  a: q1", "  b:", "x:", "  y:"}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("tree\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if !reflect.DeepEqual(loose, []string{"q3"}) {
		t.Errorf("queues in no cohort %v, want [q3]", loose)
	}
}

func TestQueueBar(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    view.Queue
		want usageBar
	}{
		{"half used", view.Queue{NominalGPU: 8000, UsedGPU: 4000}, usageBar{OwnPct: 50, NominalPct: 99}},
		{"borrowing past nominal", view.Queue{NominalGPU: 4000, UsedGPU: 5000, BorrowedGPU: 1000}, usageBar{OwnPct: 80, BorrowedPct: 20, NominalPct: 80}},
		{"no quota", view.Queue{}, usageBar{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := barOf(tc.q); got != tc.want {
				t.Errorf("bar %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFormatGPU(t *testing.T) {
	for _, tc := range []struct {
		m    resources.MilliGPU
		want string
	}{{0, "0"}, {8000, "8"}, {2500, "2.5"}, {142, "0.142"}, {44544, "44.544"}, {-1500, "-1.5"}, {1050, "1.05"}} {
		if got := formatGPU(tc.m); got != tc.want {
			t.Errorf("formatGPU(%d) = %q, want %q", tc.m, got, tc.want)
		}
	}
}

func TestListenAddress(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{":8090", "127.0.0.1:8090", ""},
		{"127.0.0.1:0", "127.0.0.1:0", ""},
		{"0.0.0.0:8090", "0.0.0.0:8090", ""},
		{"[::1]:8090", "[::1]:8090", ""},
		{"8090", "", `dashboard address "8090": want HOST:PORT`},
	} {
		got, err := ListenAddress(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// The server answers until its context ends, runs its background task meanwhile and
// then returns without error.
func TestServerServesUntilCancelled(t *testing.T) {
	h, err := New(staticSource{snap: testSnapshot()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	background := make(chan struct{})
	ready := make(chan string, 1)
	srv := &Server{Handler: h, Ready: func(a string) { ready <- a },
		Background: func(ctx context.Context) error { close(background); <-ctx.Done(); return ctx.Err() }}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	addr := <-ready
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
	<-background
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after its context ended", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if srv.NeedLeaderElection() {
		t.Error("the dashboard would wait for leadership")
	}
}
