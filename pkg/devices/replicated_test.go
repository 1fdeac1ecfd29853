package devices_test

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
)

func TestReplicatedDevicesRoundTrip(t *testing.T) {
	r := devices.ReplicatedDevices{"nvidia.com/mig-1g.5gb": {"3:0", "0:1"}, "nvidia.com/gpu": {"6", "1"}}
	s := r.String()
	if s != "nvidia.com/gpu=1,6;nvidia.com/mig-1g.5gb=0:1,3:0" {
		t.Fatalf("String() = %q", s)
	}
	back, err := devices.ParseReplicatedDevices(s)
	if err != nil || back.String() != s {
		t.Fatalf("read back %v (%v), want %s", back, err, s)
	}
	for _, tc := range []struct{ in, want string }{
		{"nvidia.com/gpu", "want <resource>=<device>"},
		{"nvidia.com/gpu=1;nvidia.com/gpu=2", "listed twice"},
		{"nvidia.com/gpu=all", `device "all"`},
		{"nvidia.com/gpu=GPU-abc", `device "GPU-abc"`},
		{"nvidia.com/gpu=1:x", `device "1:x"`},
	} {
		if _, err := devices.ParseReplicatedDevices(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
