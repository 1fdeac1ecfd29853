package bench

import (
	"reflect"
	"testing"
)

// progressLog records the calls a run makes to its Progress.
type progressLog struct{ calls [][2]int }

func (l *progressLog) record(done, total int) { l.calls = append(l.calls, [2]int{done, total}) }

// TestProgressReports: a frag run reports each pod of its sequence and then the end;
// the cycle experiment reports before the first cycle and after each timed one.
func TestProgressReports(t *testing.T) {
	var frag progressLog
	cfg := FragConfig{Nodes: oneGPUPool(1), Pods: fragPods(500, 500, 500, 500), InflatePercent: 130, CurveStepPermille: 100,
		Progress: frag.record}
	if _, err := RunFragOnce(cfg, NamedPolicy{Name: "cap", New: capFactory}, 1); err != nil {
		t.Fatal(err)
	}
	// Three pods arrive (130% of one GPU in 500m pods).
	if want := [][2]int{{0, 3}, {1, 3}, {2, 3}, {3, 3}}; !reflect.DeepEqual(frag.calls, want) {
		t.Errorf("frag progress %v, want %v", frag.calls, want)
	}
	var cycles progressLog
	spec := CycleSpec{Scale: ScaleSpec{Nodes: 4, Jobs: 40, Queues: 2, Cohorts: 1, Seed: 3}, Quiet: 2, Bursts: 1, BurstSize: 2,
		Progress: cycles.record}
	if _, err := RunCycles(spec); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, 4}, {1, 4}, {2, 4}, {3, 4}, {4, 4}}; !reflect.DeepEqual(cycles.calls, want) {
		t.Errorf("cycle progress %v, want %v", cycles.calls, want)
	}
}
