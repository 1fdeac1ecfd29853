package bench

import (
	"reflect"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	spec := ScaleSpec{Nodes: 10, Jobs: 200, Queues: 6, Cohorts: 3, Seed: 7}
	a, err := Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same spec gave different objects")
	}
	spec.Seed = 8
	c, _ := Generate(spec)
	if reflect.DeepEqual(a.Workloads, c.Workloads) {
		t.Fatal("a different seed gave the same jobs")
	}
	if len(a.ClusterQueues) != 6 || len(a.Cohorts) != 3 || len(a.Workloads) != 200 || a.NodePools[0].Count != 10 {
		t.Fatalf("wrong sizes: %d queues, %d cohorts, %d jobs", len(a.ClusterQueues), len(a.Cohorts), len(a.Workloads))
	}
	var nominal int64
	for _, cq := range a.ClusterQueues {
		nominal += int64(cq.ResourceGroups[0].Flavors[0].Resources[2].Nominal)
	}
	if nominal != 80 {
		t.Fatalf("quota adds up to %d GPUs, want the fleet's 80", nominal)
	}
}

func TestGenerateRejectsBadSpecs(t *testing.T) {
	for _, s := range []ScaleSpec{{Nodes: 0, Queues: 1, Cohorts: 1}, {Nodes: 1, Queues: 0, Cohorts: 1},
		{Nodes: 1, Queues: 2, Cohorts: 3}, {Nodes: 1, Queues: 1, Cohorts: 1, Jobs: -1}} {
		if _, err := Generate(s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}
