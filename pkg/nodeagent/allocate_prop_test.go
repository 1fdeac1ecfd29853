package nodeagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml/mock"
	"pgregory.net/rapid"
)

// TestAllocateFollowsAnnotationProperty: whatever the kubelet picks, a pod's containers
// receive exactly the annotated devices, in annotation order, each once; asking for more
// than the annotation holds fails.
func TestAllocateFollowsAnnotationProperty(t *testing.T) {
	srv := mock.NewDGXA100()
	srv.Init()
	s := devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}
	d, err := nodeagent.Discover(srv, s)
	if err != nil {
		t.Fatal(err)
	}
	if r := srv.Shutdown(); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	rapid.Check(t, func(rt *rapid.T) {
		inv, err := nodeagent.NewInventory(d, s)
		if err != nil {
			rt.Fatal(err)
		}
		var all []string
		for _, p := range inv.Devices("nvidia.com/gpu") {
			all = append(all, p.ID)
		}
		annotated := rapid.SliceOfNDistinct(rapid.SampledFrom(all), 1, 12, rapid.ID[string]).Draw(rt, "annotated")
		pod := nodeagent.Pod{Namespace: "ns", Name: "p", UID: "u", Annotations: map[string]string{nodeagent.AnnotationDevices: strings.Join(annotated, ",")}}
		a := nodeagent.NewAllocator(inv, fakePods{pod: pod}, "")
		var got []string
		for len(got) < len(annotated) {
			n := rapid.IntRange(1, len(annotated)-len(got)).Draw(rt, "container")
			kubelet := rapid.SliceOfN(rapid.SampledFrom(all), n, n).Draw(rt, "kubelet")
			ca, err := a.Allocate(context.Background(), "nvidia.com/gpu", kubelet)
			if err != nil {
				rt.Fatalf("container of %d: %v", n, err)
			}
			got = append(got, ca.IDs...)
		}
		if fmt.Sprint(got) != fmt.Sprint(annotated) {
			rt.Fatalf("allocated %v, want the annotation %v", got, annotated)
		}
		if _, err := a.Allocate(context.Background(), "nvidia.com/gpu", all[:1]); err == nil {
			rt.Fatal("a container beyond the annotation got devices")
		}
	})
}
