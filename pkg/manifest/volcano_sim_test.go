package manifest

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/internal/testing/upstream"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// TestSimulateVolcanoExampleQueues: Volcano's own examples, whose queues have a weight
// only or a capability only, run on a small cluster. The deployment example's queue
// "test" (capability cpu 2, reclaimable false) used to get no quota of its own and, not
// reclaimable, could never borrow: its Deployment waited forever. Now its share of the
// cluster, capped at 2 CPUs, admits it. The hierarchical example's four weight-only
// queues get a quarter of the cluster each, which holds each job's gang.
func TestSimulateVolcanoExampleQueues(t *testing.T) {
	root := upstream.ModuleDir(t, "volcano.sh/volcano", "v1.8.2")
	nodes := filepath.Join(t.TempDir(), "nodes.yaml")
	if err := os.WriteFile(nodes, []byte(k8s.MakeNodePool("n", 2).YAML()), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		files []string
		want  []string // workloads placed within the hour
	}{
		{"deployment", []string{"example/deployment/queue.yaml", "example/deployment/deployment.yaml"},
			[]string{"default/deploy-with-volcano-0"}},
		{"hierarchical jobs", []string{"example/hierarchical-jobs/queues.yaml", "example/hierarchical-jobs/jobs.yaml"},
			[]string{"default/eng-dev-job", "default/eng-prod-job", "default/sci-dev-job", "default/sci-prod-job"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			paths := []string{nodes}
			for _, f := range tt.files {
				paths = append(paths, filepath.Join(root, f))
			}
			objs, err := Load(paths, nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := sim.New(objs, sim.Options{Policy: engine.Policy{Seed: 1}, KeepLog: true, Until: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
			placed := map[string]bool{}
			for _, r := range s.Log() {
				if r.Event == sim.EvPlaced {
					placed[string(r.Workload)] = true
				}
			}
			var got []string
			for w := range placed {
				got = append(got, w)
			}
			sort.Strings(got)
			if len(got) != len(tt.want) {
				t.Fatalf("placed %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("placed %v, want %v", got, tt.want)
				}
			}
		})
	}
}
