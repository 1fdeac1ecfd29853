package dashboard

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// examplesReplay simulates the repository's examples/ as `gantry simulate -f examples/`.
func examplesReplay(t *testing.T) (*Replay, report.Report) {
	t.Helper()
	objs, err := manifest.Load([]string{"../../examples"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, rep, err := RunSimulation(objs, sim.Options{Policy: engine.DefaultPolicy()}, report.KPIOptions{Shapes: report.ShapesOf(objs.Workloads)})
	if err != nil {
		t.Fatal(err)
	}
	return r, rep
}

// A snapshot reached by stepping a simulator forward from an earlier moment is the one
// a fresh run to that moment gives, and going back in time starts a fresh run.
func TestReplayStepsForwardAsAFreshRun(t *testing.T) {
	ctx := context.Background()
	stepped, rep := examplesReplay(t)
	if rep.End == 0 {
		t.Fatal("the examples' run has no length")
	}
	moments := []time.Duration{30 * time.Minute, 65 * time.Minute, 10 * time.Minute, 0, time.Duration(rep.End)}
	for _, at := range moments {
		if _, err := stepped.Snapshot(ctx, at); err != nil {
			t.Fatalf("at %s: %v", at, err)
		}
	}
	for _, at := range moments {
		fresh, _ := examplesReplay(t)
		want, err := fresh.Snapshot(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		got, err := stepped.Snapshot(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("at %s: the stepped replay's snapshot differs from a fresh run's", at)
		}
	}
}
