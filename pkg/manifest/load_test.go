package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
)

// The shipped examples load cleanly and hold the reference architecture.
func TestLoadExamples(t *testing.T) {
	objs, err := Load([]string{"../../examples"}, nil)
	if err != nil {
		t.Fatalf("examples do not load:\n%v", err)
	}
	counts := map[string]int{"pools": len(objs.NodePools), "flavors": len(objs.Flavors), "clusterQueues": len(objs.ClusterQueues),
		"localQueues": len(objs.LocalQueues), "workloads": len(objs.Workloads), "events": len(objs.Events), "topologies": len(objs.Topologies)}
	want := map[string]int{"pools": 4, "flavors": 5, "clusterQueues": 3, "localQueues": 6, "workloads": 14, "events": 1, "topologies": 1}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("counts = %v, want %v", counts, want)
	}
	kinds := map[string]bool{}
	for _, w := range objs.Workloads {
		kinds[w.Owner.Kind] = true
		if w.Timing.Duration == 0 {
			t.Errorf("workload %s has no gantry.dev/duration", w.Key())
		}
	}
	for _, k := range []string{"Job", "PyTorchJob", "RayCluster", "MPIJob", "JobSet", "Pod"} {
		if !kinds[k] {
			t.Errorf("examples have no %s", k)
		}
	}
}

// A `kubectl get nodes -o yaml` List of GPU nodes loads with status intact.
func TestLoadKubectlNodeList(t *testing.T) {
	objs, err := Load([]string{"testdata/nodes-from-kubectl.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Nodes) != 2 {
		t.Fatalf("got %d nodes, want 2", len(objs.Nodes))
	}
	n := objs.Nodes[1]
	if n.Object.Name != "gpu-a100-mig-0" || n.Source.Line != 55 {
		t.Errorf("node = %s at %s, want gpu-a100-mig-0 at line 55", n.Object.Name, n.Source)
	}
	if q := n.Object.Status.Allocatable["nvidia.com/mig-1g.5gb"]; q.Value() != 56 {
		t.Errorf("allocatable mig-1g.5gb = %s, want 56", q.String())
	}
}

// Folders are read recursively in sorted order, only *.yaml/*.yml/*.json; JSON works;
// "-" reads stdin; errors name each file.
func TestLoadPathsAndStdin(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b/flavor.yml", k8s.MakeFlavor("f").YAML())
	write("a/cq.json", `{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq"},
 "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 4}]}]}]}}`)
	write("notes.txt", "not a manifest")
	stdin := strings.NewReader(k8s.MakeLocalQueue("ns", "q", "cq").YAML())
	objs, err := Load([]string{dir, "-"}, stdin)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Flavors) != 1 || len(objs.ClusterQueues) != 1 || len(objs.LocalQueues) != 1 {
		t.Fatalf("loaded %d flavors, %d cqs, %d lqs", len(objs.Flavors), len(objs.ClusterQueues), len(objs.LocalQueues))
	}
	if got := objs.ClusterQueues[0].Source.File; got != filepath.Join(dir, "a/cq.json") {
		t.Errorf("cq source = %s", got)
	}
	if got := objs.LocalQueues[0].Source; got.File != StdinName || got.Line != 1 {
		t.Errorf("stdin source = %s", got)
	}

	_, err = Load([]string{filepath.Join(dir, "missing.yaml")}, nil)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !strings.Contains(list[0].Error(), "missing.yaml: cannot read") {
		t.Errorf("missing file error = %v", err)
	}
}

// Loading is deterministic: the same input gives the same objects and errors.
func TestLoadDeterministic(t *testing.T) {
	a, errA := Load([]string{"../../examples"}, nil)
	b, errB := Load([]string{"../../examples"}, nil)
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(errA, errB) {
		t.Error("two loads of the examples differ")
	}
}

// BenchmarkLoadExamples measures loading and checking the shipped examples.
func BenchmarkLoadExamples(b *testing.B) {
	for b.Loop() {
		if _, err := Load([]string{"../../examples"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
