package placement

import (
	"reflect"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

func resourcesOneGPU() resources.Vector { return resources.Vector{resources.NvidiaGPU: 1} }

func inReq(key string, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

func terms(ts ...[]corev1.NodeSelectorRequirement) *corev1.NodeSelector {
	out := &corev1.NodeSelector{}
	for _, t := range ts {
		out.NodeSelectorTerms = append(out.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
	}
	return out
}

// placeOf reads node selectors and In affinities, merges and sorts them, and leaves
// alone what it cannot express.
func TestPlaceOf(t *testing.T) {
	cases := []struct {
		name string
		ps   api.PodSet
		want []labelReq
	}{
		{"anywhere", api.PodSet{}, nil},
		{"node selector", api.PodSet{NodeSelector: map[string]string{"m": "T4"}}, []labelReq{{"m", []string{"T4"}}}},
		{"one term: values sorted and deduplicated",
			api.PodSet{Affinity: terms([]corev1.NodeSelectorRequirement{inReq("m", "V100M32", "V100M16", "V100M32")})},
			[]labelReq{{"m", []string{"V100M16", "V100M32"}}}},
		{"selector and affinity on one key: the values both allow",
			api.PodSet{NodeSelector: map[string]string{"m": "T4"}, Affinity: terms([]corev1.NodeSelectorRequirement{inReq("m", "T4", "G2")})},
			[]labelReq{{"m", []string{"T4"}}}},
		{"several terms on one key: their values merged",
			api.PodSet{Affinity: terms([]corev1.NodeSelectorRequirement{inReq("m", "T4")}, []corev1.NodeSelectorRequirement{inReq("m", "G2")})},
			[]labelReq{{"m", []string{"G2", "T4"}}}},
		{"several terms on different keys: not read",
			api.PodSet{Affinity: terms([]corev1.NodeSelectorRequirement{inReq("m", "T4")}, []corev1.NodeSelectorRequirement{inReq("z", "a")})}, nil},
		{"NotIn is not read",
			api.PodSet{Affinity: terms([]corev1.NodeSelectorRequirement{{Key: "m", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"T4"}}})}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := placeOf(&tc.ps); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("placeOf = %v, want %v", got, tc.want)
			}
		})
	}
}

// A node meets "anywhere", the places whose every requirement its labels satisfy, and
// the places that do not read a key it lacks.
func TestWhereTableMask(t *testing.T) {
	var w whereTable
	t4 := w.id([]labelReq{{"m", []string{"T4"}}})
	v100 := w.id([]labelReq{{"m", []string{"V100M16", "V100M32"}}})
	zone := w.id([]labelReq{{"z", []string{"a"}}})
	both := w.id([]labelReq{{"m", []string{"T4"}}, {"z", []string{"a"}}})
	if again := w.id([]labelReq{{"m", []string{"T4"}}}); again != t4 {
		t.Fatalf("the same place got ids %d and %d", t4, again)
	}
	bits := func(ids ...placeID) uint64 {
		m := uint64(1)
		for _, id := range ids {
			m |= 1 << id
		}
		return m
	}
	cases := []struct {
		labels map[string]string
		want   uint64
	}{
		{map[string]string{"m": "T4", "z": "a"}, bits(t4, zone, both)},
		{map[string]string{"m": "T4"}, bits(t4)},
		{map[string]string{"m": "V100M32", "z": "b"}, bits(v100)},
		{map[string]string{"z": "a"}, bits(zone)},
		{nil, bits()},
	}
	for _, tc := range cases {
		if got := w.mask(tc.labels); got != tc.want {
			t.Errorf("mask(%v) = %b, want %b", tc.labels, got, tc.want)
		}
	}
}

// Past maxPlaces distinct places, new ones read as anywhere.
func TestWhereTableBounded(t *testing.T) {
	var w whereTable
	for k := range maxPlaces + 5 {
		id := w.id([]labelReq{{"m", []string{string(rune('A' + k))}}})
		if k < maxPlaces-1 && int(id) != k+1 {
			t.Fatalf("place %d got id %d", k, id)
		}
		if k >= maxPlaces-1 && id != 0 {
			t.Fatalf("place %d beyond the cap got id %d, want 0", k, id)
		}
	}
}

// Twins may differ in labels, so the fragmentation scorer stops being twin-safe once an
// observed pod may run only on some nodes.
func TestFragmentationTwinSafety(t *testing.T) {
	s := NewShapeStats()
	s.Observe(resourcesOneGPU())
	frag := []WeightedScorer{{Fragmentation{Shapes: s}, 1}}
	if !twinSafe(frag) {
		t.Fatal("unconstrained shapes: fragmentation should be twin-safe")
	}
	s.ObservePodSet(&api.PodSet{Name: "p", Count: 1, Requests: resourcesOneGPU(), NodeSelector: map[string]string{"m": "T4"}})
	if twinSafe(frag) {
		t.Fatal("a pod tied to a label: fragmentation reads labels and is not twin-safe")
	}
}
