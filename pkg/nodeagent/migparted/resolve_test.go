package migparted

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
)

const resolveFile = `version: v1
mig-configs:
  override:
    - devices: all
      mig-enabled: true
      mig-devices: {"1g.5gb": 7}
    - devices: [1]
      mig-enabled: false
    - device-filter: "0x20B010DE:0x145F10DE"
      devices: all
      mig-enabled: true
      mig-devices: {"3g.20gb": 1, "4g.20gb": 1}
  me-spellings:
    - devices: [0]
      mig-enabled: true
      mig-devices: {"1g.5gb.me": 1, "1g.5gb": 1}
    - devices: [1]
      mig-enabled: true
      mig-devices: {"1g.5gb+me": 1}
  some:
    - devices: [0]
      mig-enabled: true
      mig-devices: {"7g.40gb": 1}
  not-here:
    - device-filter: "0x233010DE"
      devices: all
      mig-enabled: true
      mig-devices: {"7g.80gb": 1}
  too-many:
    - devices: all
      mig-enabled: true
      mig-devices: {"3g.20gb": 3}
  two-me:
    - devices: all
      mig-enabled: true
      mig-devices: {"1g.5gb+me": 2}
  compute-profile:
    - devices: all
      mig-enabled: true
      mig-devices: {"1c.3g.20gb": 1}
  index-9:
    - devices: [9]
      mig-enabled: false
  off-all:
    - devices: all
      mig-enabled: false
  on-by-index:
    - devices: [0]
      mig-enabled: true
      mig-devices: {}
`

func model(t *testing.T, name string) devices.Model {
	t.Helper()
	m, err := devices.LookupModel(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func describe(plans []Plan) string {
	out := make([]string, len(plans))
	for i, p := range plans {
		switch {
		case !p.Selected:
			out[i] = "keep"
		case !p.MIGEnabled:
			out[i] = "off"
		default:
			out[i] = fmt.Sprint(p.Instances)
		}
	}
	return strings.Join(out, " ")
}

func TestResolve(t *testing.T) {
	spec, err := Parse("r.yaml", []byte(resolveFile))
	if err != nil {
		t.Fatal(err)
	}
	a100 := model(t, "A100-SXM4-40GB")
	gpus := []GPU{
		{Index: 0, PCIID: 0x20B010DE, Model: a100},
		{Index: 1, PCIID: 0x20B010DE, Model: a100},
		{Index: 2, PCIID: 0x20B010DE, SubsystemID: 0x145F10DE, Model: a100},
	}
	me := "1g.5gb+me"
	if p, _ := modelProfile(a100, "1g.5gb.me"); p.Name != "" {
		me = p.Name
	}
	tests := []struct {
		config string
		gpus   []GPU
		// want is each GPU's plan; err a fragment of the error.
		want, err string
	}{
		{"override", gpus, "[1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 1g.5gb@4 1g.5gb@5 1g.5gb@6] off [4g.20gb@0 3g.20gb@4]", ""},
		{"me-spellings", gpus, fmt.Sprintf("[1g.5gb@0 %s@1] [%s@0] keep", me, me), ""},
		{"some", gpus, "[7g.40gb@0] keep keep", ""},
		{"on-by-index", gpus, "[] keep keep", ""},
		{"off-all", []GPU{{Index: 0, Model: model(t, "T4")}}, "keep", ""},
		{"missing", gpus, "", `r.yaml: no config "missing" (configs: compute-profile, index-9,`},
		{"not-here", gpus, "", `r.yaml: config "not-here": selects none of the node's GPUs (A100-SXM4-40GB, PCI IDs 0x20B010DE 0x20B010DE 0x20B010DE)`},
		{"too-many", gpus, "", `r.yaml:30: config "too-many", entry 0, field mig-devices: GPU 0: `},
		{"two-me", gpus, "", `r.yaml:34: config "two-me", entry 0, field mig-devices: GPU 0: `},
		{"compute-profile", gpus, "", `r.yaml:38: config "compute-profile", entry 0, field mig-devices["1c.3g.20gb"]: GPU 0 (A100-SXM4-40GB) has no MIG profile`},
		{"index-9", gpus, "", `r.yaml:42: config "index-9", entry 0, field devices: GPU 9 does not exist (the node has 3 GPUs)`},
		{"on-by-index", []GPU{{Index: 0, Model: model(t, "T4")}}, "", `config "on-by-index", entry 0, field devices: GPU 0 (T4) does not support MIG`},
	}
	for _, tc := range tests {
		t.Run(tc.config, func(t *testing.T) {
			plans, err := spec.Resolve(tc.config, tc.gpus)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(plans); got != tc.want {
				t.Errorf("plans %s, want %s", got, tc.want)
			}
			for _, p := range plans {
				if err := a100.ValidateLayout(p.Instances); p.Selected && err != nil {
					t.Errorf("GPU %d: invalid layout: %v", p.Index, err)
				}
			}
		})
	}
}
