package view

import (
	"reflect"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
)

func TestCohortsOf(t *testing.T) {
	defined := []api.Cohort{{Meta: api.Meta{Name: "research"}, Parent: "org"}}
	queues := []Queue{{Name: "b", Cohort: "research"}, {Name: "a", Cohort: "research"}, {Name: "c", Cohort: "prod"}, {Name: "lonely"}}
	want := []Cohort{
		{Name: "org"},
		{Name: "prod", Queues: []string{"c"}},
		{Name: "research", Parent: "org", Queues: []string{"a", "b"}},
	}
	if got := CohortsOf(defined, queues); !reflect.DeepEqual(got, want) {
		t.Errorf("CohortsOf = %+v, want %+v", got, want)
	}
}

func TestSnapshotSortPutsPendingInQueueOrder(t *testing.T) {
	s := Snapshot{Workloads: []Workload{
		{ID: "ns/run", ClusterQueue: "q"},
		{ID: "ns/second", ClusterQueue: "q", Position: 2},
		{ID: "ns/other", ClusterQueue: "p"},
		{ID: "ns/first", ClusterQueue: "q", Position: 1},
	}}
	s.Sort()
	var got []string
	for _, w := range s.Workloads {
		got = append(got, w.ID)
	}
	want := []string{"ns/other", "ns/first", "ns/second", "ns/run"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
