package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/view"
)

// explain prints both modes through one printer (explainText.write): for a simulation
// every fact of the explanation is on its line, for every workload at every time (a
// pending, reserved, running, finished or not yet submitted one).
func TestExplainPrintsEveryFact(t *testing.T) {
	objs, err := manifest.Load([]string{"../../examples/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Duration{time.Nanosecond, 40 * time.Minute, 65 * time.Minute, 0} {
		s, err := sim.New(objs, sim.Options{Policy: engine.DefaultPolicy()})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RunUntil(at); err != nil {
			t.Fatal(err)
		}
		for _, w := range s.View().Workloads {
			e, err := s.Explain(api.WorkloadID(w.ID))
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := explainFromSim(e).write(&got); err != nil {
				t.Fatal(err)
			}
			want := []string{"workload:      " + e.Workload + "\n", "at:            " + sim.FormatDuration(e.T) + "\n",
				"phase:         " + string(e.Phase) + "\n", fmt.Sprintf("(preempted %d times)", e.Preemptions)}
			if e.Reason != "" {
				want = append(want, "reason:        "+e.Reason+"\n")
			}
			if e.Layer != "" {
				want = append(want, "held by:       "+e.Layer+" layer\n")
			}
			for _, d := range e.Details {
				want = append(want, "  - "+d+"\n")
			}
			if e.Remedy != "" {
				want = append(want, "to admit it:   "+e.Remedy+"\n")
			}
			if e.ETA != nil {
				want = append(want, "ETA:           "+sim.FormatDuration(*e.ETA)+" ("+e.ETABasis+")\n")
			}
			for _, p := range e.Pods {
				want = append(want, "pod "+p.Name+" on "+p.Node+" devices "+strings.Join(p.Devices, ",")+"\n")
			}
			for _, line := range want {
				if !strings.Contains(got.String(), line) {
					t.Errorf("at %s, %s: %q missing from\n%s", at, w.ID, line, got.String())
				}
			}
			if e.ETA == nil && strings.Contains(got.String(), "ETA:") {
				t.Errorf("at %s, %s: an ETA line without an ETA:\n%s", at, w.ID, got.String())
			}
		}
	}
}

// A live workload prints in the same layout: the same lines in the same order, with
// wall times for at and ETA.
func TestExplainFromView(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	eta := 15 * time.Minute
	w := view.Workload{ID: "ns/job-train", ClusterQueue: "cq", Phase: view.Pending, Layer: "admission", Reason: "WaitingForQuota",
		Details: []string{"needs 8 nvidia.com/gpu"}, Remedy: "raise the quota", Position: 2, ETA: &eta, ETABasis: "status.eta",
		Placements: []view.Pod{{Name: "p", Node: "n1", Devices: []string{"GPU-0"}}}}
	var out bytes.Buffer
	if err := explainFromView(w, at).write(&out); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"workload:      ns/job-train",
		"at:            2026-03-01T12:00:00Z",
		"phase:         Pending",
		"clusterQueue:  cq",
		"held by:       admission layer",
		"reason:        WaitingForQuota",
		"  - needs 8 nvidia.com/gpu",
		"to admit it:   raise the quota",
		"queue position: 2",
		"ETA:           2026-03-01T12:15:00Z, in 15m00s (status.eta)",
		"progress:      0s (preempted 0 times)",
		"pod p on n1 devices GPU-0",
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestFindWorkload(t *testing.T) {
	ws := []view.Workload{
		{ID: "ns/job-train", Owner: "Job/train"},
		{ID: "ns/pytorchjob-bert", Owner: "PyTorchJob/bert"},
		{ID: "ns/rayjob-bert", Owner: "RayJob/bert"},
		{ID: "other/job-train", Owner: "Job/train"},
		{ID: "ns/plain"},
	}
	cases := []struct {
		ref, want, wantErr string
	}{
		{ref: "ns/job-train", want: "ns/job-train"},
		{ref: "ns/train", want: "ns/job-train"},
		{ref: "other/train", want: "other/job-train"},
		{ref: "ns/plain", want: "ns/plain"},
		{ref: "ns/bert", wantErr: "several kinds"},
		{ref: "ns/missing", wantErr: "no Workload of that name"},
	}
	for _, c := range cases {
		got, err := findWorkload(ws, c.ref)
		switch {
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", c.ref, err, c.wantErr)
		case c.wantErr == "" && (err != nil || got.ID != c.want):
			t.Errorf("%s: %q, %v; want %s", c.ref, got.ID, err, c.want)
		}
	}
}
