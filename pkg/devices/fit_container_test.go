package devices_test

import (
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
)

// A container asking for more than one replica of a GPU that refuses it (MPS always,
// time-slicing with failRequestsGreaterThanOne) does not fit there, so the scheduler
// never places a pod the node's device plugin would refuse; spread over containers, the
// same replicas fit.
func TestFitRefusesMultiReplicaContainers(t *testing.T) {
	strict := devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4, FailRequestsGreaterThanOne: true}
	tests := []struct {
		name    string
		node    *gt.DevicesWrapper
		req     devices.Request
		wantErr string // "" means it fits
	}{
		{"MPS, one container asks 2", gt.MakeDevices("H100", 2).MPS(4, 0), devices.Request{Units: 2}, "maximum request size for shared resources is 1; found 2"},
		{"MPS, two containers ask 1 each", gt.MakeDevices("H100", 2).MPS(4, 0), devices.Request{Units: 2, PerContainer: 1}, ""},
		{"MPS, one replica", gt.MakeDevices("H100", 2).MPS(4, 0), devices.Request{Units: 1}, ""},
		{"time-slicing allows 2 by default", gt.MakeDevices("H100", 2).TimeSlicing(4, false), devices.Request{Units: 2}, ""},
		{"time-slicing with the rule", gt.MakeDevices("H100", 2).Sharing(strict), devices.Request{Units: 2, PerContainer: 2}, "found 2"},
		{"renamed MPS replicas", gt.MakeDevices("H100", 1).Sharing(devices.Sharing{Mode: devices.MPS, Replicas: 4, RenameByDefault: true}),
			devices.Request{Shared: 3}, "found 3"},
		{"exclusive GPUs ignore it", gt.MakeDevices("H100", 2), devices.Request{Units: 2}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ref := tc.node.Obj().Fit(tc.req)
			switch {
			case tc.wantErr == "" && ref != nil:
				t.Fatalf("refused: %v", ref)
			case tc.wantErr != "" && (ref == nil || !strings.Contains(ref.Reason, tc.wantErr)):
				t.Fatalf("refusal %v, want one saying %q", ref, tc.wantErr)
			}
		})
	}
}
