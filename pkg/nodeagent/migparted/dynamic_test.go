package migparted

import (
	"strings"
	"testing"
)

// all-dynamic is offered by every file (MIG on, no instances, on the MIG GPUs); a file
// may define it for NVIDIA's MIG manager, but only as MIG on without instances.
func TestDynamicConfig(t *testing.T) {
	const header = "version: v1\nmig-configs:\n  other:\n    - devices: all\n      mig-enabled: false\n"
	a100 := model(t, "A100-SXM4-40GB")
	gpus := []GPU{{Index: 0, PCIID: 0x20B010DE, Model: a100}, {Index: 1, PCIID: 0x20B010DE, Model: a100}}
	tests := []struct {
		name, file, config string
		gpus               []GPU
		// want is each GPU's plan (describe); err a fragment of the parse or resolve error.
		want, err string
	}{
		{"built in, file lacks it", header, "all-dynamic", gpus, "[] []", ""},
		{"spelled as the device model reads layouts", header, " All-Dynamic", gpus, "[] []", ""},
		{"built in skips GPUs without MIG", header, "all-dynamic", []GPU{{Index: 0, Model: model(t, "T4")}}, "keep", ""},
		{"defined by the file for some GPUs", header + "  all-dynamic:\n    - devices: [1]\n      mig-enabled: true\n      mig-devices: {}\n",
			"all-dynamic", gpus, "keep []", ""},
		{"defined with instances", header + "  all-dynamic:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {\"1g.5gb\": 7}\n",
			"all-dynamic", gpus, "", `d.yaml:7: config "all-dynamic", entry 0: all-dynamic is the layout chosen at allocation time: its entries may only turn MIG on without instances`},
		{"defined as MIG off", header + "  all-dynamic:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {}\n    - devices: [0]\n      mig-enabled: false\n",
			"all-dynamic", gpus, "", `config "all-dynamic", entry 1: all-dynamic is the layout`},
		{"other names still need the file", header, "all-dynamic-ish", gpus, "", `no config "all-dynamic-ish"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Parse("d.yaml", []byte(tc.file))
			if err == nil {
				if has := spec.Has(tc.config); has != (tc.err == "") {
					t.Errorf("Has(%q) = %t", tc.config, has)
				}
				var plans []Plan
				if plans, err = spec.Resolve(tc.config, tc.gpus); err == nil && describe(plans) != tc.want {
					t.Errorf("plans %s, want %s", describe(plans), tc.want)
				}
			}
			if (err != nil) != (tc.err != "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}
