package pluginconfig

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		want     devices.Sharing
		strategy bool
		warnings []string
	}{
		{name: "nothing shared", in: "version: v1\n", want: devices.Sharing{Mode: devices.Exclusive}},
		{
			name: "time-slicing every GPU, renamed",
			in: "version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n    renameByDefault: true\n" +
				"    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
			want:     devices.Sharing{Mode: devices.TimeSlicing, RenameByDefault: true, Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: 4}}},
			strategy: true,
		},
		{
			name: "time-sliced MIG devices, a count and a list",
			in: "version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n    failRequestsGreaterThanOne: true\n    resources:\n" +
				"    - name: nvidia.com/mig-1g.10gb+me\n      replicas: 2\n      devices: 2\n" +
				"    - name: nvidia.com/mig-3g.40gb\n      replicas: 3\n      rename: nvidia.com/mig-3g.40gb.shared\n      devices: [\"0:1\", GPU-abc]\n",
			want: devices.Sharing{Mode: devices.TimeSlicing, MIGStrategy: devices.MIGMixed, FailRequestsGreaterThanOne: true, Resources: []devices.ReplicatedResource{
				{Name: "nvidia.com/mig-1g.10gb.me", Replicas: 2, DeviceCount: 2},
				{Name: "nvidia.com/mig-3g.40gb", Rename: "nvidia.com/mig-3g.40gb.shared", Replicas: 3, Devices: []string{"0:1", "GPU-abc"}},
			}},
			strategy: true,
		},
		{
			name: "MPS, runtime flags noted",
			in: "version: v1\nflags:\n  failOnInitError: true\n  plugin:\n    passDeviceSpecs: true\n    deviceListStrategy: [envvar, cdi-annotations]\n" +
				"sharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 10\n      devices: all\n",
			want: devices.Sharing{Mode: devices.MPS, Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: 10}}},
			warnings: []string{
				"f.yaml:3: flags.failOnInitError: ignored",
				"f.yaml:5: flags.plugin.passDeviceSpecs: ignored",
				"f.yaml:6: flags.plugin.deviceListStrategy: ignored",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("f.yaml", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Sharing, tc.want) || c.MIGStrategySet != tc.strategy {
				t.Errorf("sharing %+v (strategy set %t), want %+v (%t)", c.Sharing, c.MIGStrategySet, tc.want, tc.strategy)
			}
			if len(c.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", c.Warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.HasPrefix(c.Warnings[i], w) {
					t.Errorf("warning %d = %q, want prefix %q", i, c.Warnings[i], w)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	ts := "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n"
	tests := []struct{ name, in, want string }{
		{"empty", "", "f.yaml: empty file"},
		{"wrong version", "version: v2\n", `f.yaml:1: version: unsupported version "v2"`},
		{"unknown field", "version: v1\nsharing:\n  timeslicing: {}\n", "line 3: field timeslicing not found"},
		{"unknown resource field", ts + "      replica: 2\n", "line 6: field replica not found"},
		{"wrong type", ts + "      replicas: many\n", "line 6: cannot unmarshal"},
		{"no replicas", ts, "f.yaml:5: sharing.timeSlicing.resources.0.replicas: 0: want at least 1"},
		{"no name", "version: v1\nsharing:\n  mps:\n    resources:\n    - replicas: 2\n", "sharing.mps.resources.0.name: missing"},
		{"bad count", ts + "      replicas: 2\n      devices: some\n", `f.yaml:7: sharing.timeSlicing.resources.0.devices: "some"`},
		{"empty list", ts + "      replicas: 2\n      devices: []\n", "devices: empty list"},
		{"both modes", ts + "      replicas: 2\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n", "sharing: timeSlicing and mps both"},
		{"bad strategy", "version: v1\nflags:\n  migStrategy: all\n", `f.yaml:3: flags.migStrategy: unknown strategy "all"`},
		{"pattern renames", "version: v1\nresources:\n  gpus: []\n", "f.yaml:3: resources: renaming GPUs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
