package devices_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
)

func inst(spec string) []devices.Instance {
	var out []devices.Instance
	for _, f := range strings.Fields(spec) {
		p, s, _ := strings.Cut(f, "@")
		out = append(out, devices.Instance{Profile: p, Start: int(s[0] - '0')})
	}
	return out
}

func TestValidateLayoutKnownCases(t *testing.T) {
	tests := []struct {
		name, model, layout string
		// wantErr: a substring of the error, "" when the hardware accepts the layout
		wantErr string
	}{
		{"4g+3g", "A100", "4g.20gb@0 3g.20gb@4", ""},
		{"4g+4g", "A100", "4g.20gb@0 4g.20gb@0", "overlaps"},
		{"4g at slot 4", "A100", "4g.20gb@4", "cannot start"},
		{"seven 1g", "A100", "1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 1g.5gb@4 1g.5gb@5 1g.5gb@6", ""},
		{"1g at slot 7", "A100", "1g.5gb@7", "cannot start"},
		{"3g+3g", "A100", "3g.20gb@0 3g.20gb@4", ""},
		{"2g+2g+3g", "A100", "2g.10gb@0 2g.10gb@2 3g.20gb@4", ""},
		{"2g x3 + 1g", "A100", "2g.10gb@0 2g.10gb@2 2g.10gb@4 1g.5gb@6", ""},
		{"4 x 1g.10gb", "A100", "1g.10gb@0 1g.10gb@2 1g.10gb@4 1g.10gb@6", ""},
		{"two +me", "A100", "1g.5gb+me@0 1g.5gb+me@1", "more than 1"},
		{"+me with others", "A100", "1g.5gb+me@0 1g.5gb@1 2g.10gb@2 3g.20gb@4", ""},
		{"7g alone", "H100", "7g.80gb@0", ""},
		{"7g + 1g", "H100", "7g.80gb@0 1g.10gb@1", "overlaps"},
		{"unknown profile", "H100", "1g.5gb@0", "no MIG profile"},
		{"A30 2g+1g+1g", "A30", "2g.12gb@0 1g.6gb@2 1g.6gb@3", ""},
		{"A30 1g.6gb+me and 2g.12gb+me", "A30", "1g.6gb+me@0 2g.12gb+me@2", "media-extension"},
		{"non-MIG model", "T4", "1g.5gb@0", "does not support MIG"},
		{"Kubernetes spelling of +me", "A100", "1g.5gb.me@0 1g.5gb@1", ""},
		{"B200 balanced", "B200", "2g.45gb@0 1g.23gb@2 1g.23gb@3 3g.90gb@4", ""},
		{"B200 1g.45gb at odd slot", "B200", "1g.45gb@1", "cannot start"},
		{"RTX +me.all with -me", "RTX-PRO-6000", "1g.24gb+me.all@0 1g.24gb-me@1 2g.48gb-me@2", ""},
		{"RTX +me.all with a media instance", "RTX-PRO-6000", "1g.24gb+me.all@0 1g.24gb@1", "must be a -me profile"},
		{"RTX two +me.all", "RTX-PRO-6000", "1g.24gb+me.all@0 2g.48gb+me.all@2", "must be a -me profile"},
		{"RTX gfx fills the GPU", "RTX-PRO-6000", "1g.24gb+gfx@0 1g.24gb+gfx@1 1g.24gb+gfx@2 1g.24gb+gfx@3", ""},
		{"RTX 4g with 1g", "RTX-PRO-6000", "4g.96gb@0 1g.24gb@3", "overlaps"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := mustModel(t, tc.model).ValidateLayout(inst(tc.layout))
			if tc.wantErr == "" && err != nil {
				t.Fatalf("want valid, got %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestPackProfiles(t *testing.T) {
	tests := []struct {
		name, model string
		profiles    []string
		// want: the packed layout; "" means no packing exists (an error naming them)
		want string
	}{
		{"4g+3g", "A100", []string{"3g.20gb", "4g.20gb"}, "4g.20gb@0 3g.20gb@4"},
		{"3g+3g+1g has no slot", "A100", []string{"3g.20gb", "3g.20gb", "1g.5gb"}, ""},
		// 3g@0 leaves 2g@4 and 1g@6 but no slot for a second 1g (1g.5gb cannot start at 7),
		// so the 3g moves to slot 4.
		{"3g+2g+1g+1g", "A100", []string{"1g.5gb", "2g.10gb", "3g.20gb", "1g.5gb"}, "2g.10gb@0 1g.5gb@2 1g.5gb@3 3g.20gb@4"},
		{"3g+3g+1g.10gb", "A100", []string{"3g.20gb", "1g.10gb", "3g.20gb"}, ""},
		{"4g+2g+1g", "H100", []string{"1g.10gb", "2g.20gb", "4g.40gb"}, "4g.40gb@0 2g.20gb@4 1g.10gb@6"},
		{"4g+3g+1g too much compute and memory", "H100", []string{"4g.40gb", "3g.40gb", "1g.10gb"}, ""},
		{"empty", "H100", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustModel(t, tc.model).PackProfiles(tc.profiles)
			if len(tc.profiles) == 0 {
				if err != nil || got != nil {
					t.Fatalf("empty list: got %v, %v", got, err)
				}
				return
			}
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), tc.profiles[0]) {
					t.Fatalf("want an error naming the profiles, got %v, %v", got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, inst(tc.want)) {
				t.Fatalf("got %v, %v; want %v", got, err, inst(tc.want))
			}
		})
	}
}

func TestResolveLayout(t *testing.T) {
	tests := []struct {
		name, model string
		sharing     devices.Sharing
		gpus        int
		// want: the layout of each GPU ("-" for none); nil want means an error
		want []string
	}{
		{"all-disabled", "A100", devices.Sharing{Mode: devices.MIG, Layout: "all-disabled"}, 2, []string{"-", "-"}},
		{"all-1g.10gb", "A100", devices.Sharing{Mode: devices.MIG, Layout: "all-1g.10gb"}, 1, []string{"1g.10gb@0 1g.10gb@2 1g.10gb@4 1g.10gb@6"}},
		{"all-3g.40gb", "H100", devices.Sharing{Mode: devices.MIG, Layout: "all-3g.40gb"}, 1, []string{"3g.40gb@0 3g.40gb@4"}},
		{"all-1g.5gb.me (mig-parted spelling)", "A100", devices.Sharing{Mode: devices.MIG, Layout: "all-1g.5gb.me"}, 1, []string{"1g.5gb+me@0"}},
		{"all-balanced H100", "H100", devices.Sharing{Mode: devices.MIG, Layout: "all-balanced"}, 1, []string{"2g.20gb@0 1g.10gb@2 1g.10gb@3 3g.40gb@4"}},
		{"all-1g.24gb.me.all (mig-parted spelling)", "RTX-PRO-6000", devices.Sharing{Mode: devices.MIG, Layout: "all-1g.24gb.me.all"}, 1, []string{"1g.24gb+me.all@0"}},
		{"all-1g.24gb-me", "RTX-PRO-6000", devices.Sharing{Mode: devices.MIG, Layout: "all-1g.24gb-me"}, 1, []string{"1g.24gb-me@0 1g.24gb-me@1 1g.24gb-me@2 1g.24gb-me@3"}},
		{"all-balanced B200", "B200", devices.Sharing{Mode: devices.MIG, Layout: "all-balanced"}, 1, []string{"2g.45gb@0 1g.23gb@2 1g.23gb@3 3g.90gb@4"}},
		{"all-balanced RTX PRO 6000", "RTX-PRO-6000", devices.Sharing{Mode: devices.MIG, Layout: "all-balanced"}, 1, []string{"2g.48gb@0 1g.24gb@2 1g.24gb@3"}},
		{"all-balanced A30", "A30", devices.Sharing{Mode: devices.MIG, Layout: "all-balanced"}, 1, []string{"2g.12gb@0 1g.6gb@2 1g.6gb@3"}},
		{"custom one for all", "A100", devices.Sharing{Mode: devices.MIG, Layout: "custom", CustomProfiles: [][]string{{"7g.40gb"}}}, 2, []string{"7g.40gb@0", "7g.40gb@0"}},
		{"custom per GPU", "A100", devices.Sharing{Mode: devices.MIG, Layout: "custom", CustomProfiles: [][]string{{"7g.40gb"}, {}}}, 2, []string{"7g.40gb@0", "-"}},
		{"custom wrong count", "A100", devices.Sharing{Mode: devices.MIG, Layout: "custom", CustomProfiles: [][]string{{"7g.40gb"}, {}}}, 3, nil},
		{"custom no packing", "A100", devices.Sharing{Mode: devices.MIG, Layout: "custom", CustomProfiles: [][]string{{"4g.20gb", "4g.20gb"}}}, 1, nil},
		{"all-<unknown profile>", "A100", devices.Sharing{Mode: devices.MIG, Layout: "all-1g.10gb.typo"}, 1, nil},
		{"unknown layout", "A100", devices.Sharing{Mode: devices.MIG, Layout: "half"}, 1, nil},
		{"not MIG mode", "A100", devices.Sharing{Mode: devices.Exclusive, Layout: "all-1g.5gb"}, 1, []string{"-"}},
		{"MIG on T4", "T4", devices.Sharing{Mode: devices.MIG, Layout: "all-balanced"}, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mustModel(t, tc.model).ResolveLayout(tc.sharing, tc.gpus)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("want error, got %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want {
				want := inst(strings.TrimPrefix(w, "-"))
				if !slices.Equal(got[i], want) {
					t.Errorf("GPU %d: got %v, want %v", i, got[i], want)
				}
			}
		})
	}
}

func TestValidateSharing(t *testing.T) {
	tests := []struct {
		name, model string
		s           devices.Sharing
		// wantErr: substring naming the field at fault; "" for valid
		wantErr string
	}{
		{"empty is exclusive", "T4", devices.Sharing{}, ""},
		{"fractional", "T4", devices.Sharing{Mode: devices.Fractional}, ""},
		{"time-slicing", "T4", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}, ""},
		{"time-slicing no replicas", "T4", devices.Sharing{Mode: devices.TimeSlicing}, "sharing.replicas"},
		{"mps limit fits", "A100", devices.Sharing{Mode: devices.MPS, Replicas: 4, MPSMemoryLimit: 10240}, ""},
		{"mps limit too big", "A100", devices.Sharing{Mode: devices.MPS, Replicas: 4, MPSMemoryLimit: 20480}, "sharing.mpsMemoryLimit"},
		{"mps limit on time-slicing", "A100", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4, MPSMemoryLimit: 1024}, "sharing.mpsMemoryLimit"},
		{"mig on T4", "T4", devices.Sharing{Mode: devices.MIG, Layout: "all-disabled"}, "sharing.mode"},
		{"mig single balanced", "A100", devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle, Layout: "all-balanced"}, "sharing.migStrategy"},
		{"mig mixed balanced", "A100", devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: "all-balanced"}, ""},
		{"mig bad strategy", "A100", devices.Sharing{Mode: devices.MIG, MIGStrategy: "both", Layout: "all-balanced"}, "sharing.migStrategy"},
		{"mig bad layout", "A100", devices.Sharing{Mode: devices.MIG, Layout: "all-9g.90gb"}, "sharing.layout"},
		{"unknown mode", "A100", devices.Sharing{Mode: "vgpu"}, "sharing.mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := devices.ValidateSharing(mustModel(t, tc.model), tc.s)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("want valid, got %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
