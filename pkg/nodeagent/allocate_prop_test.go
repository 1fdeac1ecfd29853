package nodeagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

// TestAllocateFollowsAnnotationProperty: whatever the kubelet picks, a pod's containers
// receive exactly the annotated devices, in annotation order, each once; asking for more
// than the annotation holds fails.
func TestAllocateFollowsAnnotationProperty(t *testing.T) {
	s := devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}
	d := mocknode.MakeNode(t).Sharing(s).Discover()
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

// TestReplicaContainersProperty: on any replicated node a container is refused exactly
// when it asks for several replicas where one is the limit, and an MPS container's memory
// limit times the replicas never exceeds the GPU.
func TestReplicaContainersProperty(t *testing.T) {
	node := mocknode.MakeNode(t)
	rapid.Check(t, func(rt *rapid.T) {
		s := devices.Sharing{
			Mode:                       rapid.SampledFrom([]devices.SharingMode{devices.TimeSlicing, devices.MPS}).Draw(rt, "mode"),
			Replicas:                   rapid.IntRange(1, 8).Draw(rt, "replicas"),
			FailRequestsGreaterThanOne: rapid.Bool().Draw(rt, "failRequestsGreaterThanOne"),
		}
		d := node.Sharing(s).Discover()
		inv, err := nodeagent.NewInventory(d, s)
		if err != nil {
			rt.Fatal(err)
		}
		var all []string
		for _, p := range inv.Devices("nvidia.com/gpu") {
			all = append(all, p.ID)
		}
		ids := rapid.SliceOfNDistinct(rapid.SampledFrom(all), 1, 4, rapid.ID[string]).Draw(rt, "ids")
		ca, err := nodeagent.NewAllocator(inv, nil, "").Allocate(context.Background(), "nvidia.com/gpu", ids)
		refused := len(ids) > 1 && (s.Mode == devices.MPS || s.FailRequestsGreaterThanOne)
		if (err != nil) != refused {
			rt.Fatalf("%+v, %d replicas in one container: error %v, refusal expected %v", s, len(ids), err, refused)
		}
		if err != nil || s.Mode != devices.MPS {
			return
		}
		var mib int64
		if _, err := fmt.Sscanf(ca.Envs[nodeagent.EnvMPSMemLimit], "0=%dM", &mib); err != nil {
			rt.Fatalf("%s=%q: %v", nodeagent.EnvMPSMemLimit, ca.Envs[nodeagent.EnvMPSMemLimit], err)
		}
		gpu, _ := devices.GPUOfID(ids[0])
		if total := int64(d.GPUs[gpu].Memory); mib*int64(s.Replicas) > total || mib*int64(s.Replicas) <= total-int64(s.Replicas) {
			rt.Fatalf("%d replicas x %d MiB on a %d MiB GPU: not the device split", s.Replicas, mib, total)
		}
	})
}
