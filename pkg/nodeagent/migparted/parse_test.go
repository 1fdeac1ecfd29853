package migparted

import (
	"errors"
	"strings"
	"testing"
)

const header = "version: v1\nmig-configs:\n"

func TestParseGoodFiles(t *testing.T) {
	tests := []struct {
		name, file string
		// want describes configs[name] entry 0: filter, devices, enabled, devices map.
		config, want string
	}{
		{"all-disabled", header + "  off:\n    - devices: all\n      mig-enabled: false\n", "off", "[] all false map[]"},
		{"all-enabled has no instances", header + "  on:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {}\n", "on", "[] all true map[]"},
		{"filter as one string", header + "  c:\n    - device-filter: \"0x20B010DE\"\n      devices: all\n      mig-enabled: true\n      mig-devices: {\"1g.5gb\": 7}\n",
			"c", "[0x20B010DE] all true map[1g.5gb:7]"},
		{"filter list with subsystem, unquoted hex, indexes", header + "  c:\n    - device-filter: [0x20B010DE, \"0x20B010DE:0x134F10DE\"]\n      devices: [0, 3]\n      mig-enabled: true\n      mig-devices:\n        1g.5gb+me: 1\n        3g.20gb: 0\n        2g.10gb: 1\n",
			"c", "[0x20B010DE 0x20B010DE:0x134F10DE] [0 3] true map[1g.5gb+me:1 2g.10gb:1 3g.20gb:0]"},
		{"dot spelling and attributes", header + "  c:\n    - devices: all\n      mig-enabled: true\n      mig-devices: {\"1g.10gb.me\": 1, \"1g.24gb+me.all\": 1, \"1g.24gb-me\": 1, \"1g.24gb+gfx\": 1, \"1c.2g.10gb\": 1}\n",
			"c", "[] all true map[1c.2g.10gb:1 1g.10gb.me:1 1g.24gb+gfx:1 1g.24gb+me.all:1 1g.24gb-me:1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("f.yaml", []byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			e := s.Configs[tc.config].Entries[0]
			devs := "all"
			if !e.AllDevices {
				devs = sprint(e.Devices)
			}
			if got := sprint(e.DeviceFilter) + " " + devs + " " + sprint(e.MIGEnabled) + " " + sprint(e.MIGDevices); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseBadFiles(t *testing.T) {
	entry := "  c:\n    - devices: all\n      mig-enabled: true\n"
	tests := []struct {
		name, file string
		// want is the whole located prefix and a fragment of the reason.
		where, reason string
	}{
		{"empty", "", "f.yaml: ", "empty file"},
		{"not yaml", "version: [v1", "f.yaml: ", "not YAML"},
		{"no version", "mig-configs:\n" + entry + "      mig-devices: {}\n", "f.yaml:1: field version: ", "missing"},
		{"newer version", "version: v2\nmig-configs:\n" + entry + "      mig-devices: {}\n", "f.yaml:1: field version: ", "unsupported version \"v2\""},
		{"unknown top field", header + entry + "      mig-devices: {}\nextra: 1\n", "f.yaml:7: field extra: ", "unknown field"},
		{"no configs", header, "f.yaml:2: field mig-configs: ", "want a mapping, got nothing"},
		{"empty configs", "version: v1\nmig-configs: {}\n", "f.yaml:2: field mig-configs: ", "no configs"},
		{"config not a list", header + "  c: {devices: all}\n", "f.yaml:3: config \"c\": ", "want a list of entries"},
		{"config without entries", header + "  c: []\n", "f.yaml:3: config \"c\": ", "no entries"},
		{"repeated config", header + entry + "      mig-devices: {}\n" + entry + "      mig-devices: {}\n", "f.yaml:7: field mig-configs: ", "key \"c\" appears twice"},
		{"entry not a mapping", header + "  c:\n    - all\n", "f.yaml:4: config \"c\", entry 0: ", "want a mapping"},
		{"unknown entry field", header + entry + "      mig-devices: {}\n      mig-strategy: mixed\n", "f.yaml:7: config \"c\", entry 0, field mig-strategy: ", "unknown field"},
		{"missing devices", header + "  c:\n    - mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field devices: ", "missing"},
		{"missing mig-enabled", header + "  c:\n    - devices: all\n", "f.yaml:4: config \"c\", entry 0, field mig-enabled: ", "missing"},
		{"mig-enabled not bool", header + "  c:\n    - devices: all\n      mig-enabled: \"yes\"\n", "f.yaml:5: config \"c\", entry 0, field mig-enabled: ", "want true or false"},
		{"devices word", header + "  c:\n    - devices: some\n      mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field devices: ", "want \"all\""},
		{"devices negative", header + "  c:\n    - devices: [0, -1]\n      mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field devices: ", "want a GPU index"},
		{"devices repeated", header + "  c:\n    - devices: [1, 1]\n      mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field devices: ", "GPU 1 listed twice"},
		{"devices a mapping", header + "  c:\n    - devices: {a: 1}\n      mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field devices: ", "got a mapping"},
		{"filter not hex", header + "  c:\n    - device-filter: A100\n      devices: all\n      mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field device-filter: ", "PCI device ID \"A100\""},
		{"filter too long", header + "  c:\n    - device-filter: [\"0x20B010DE0\"]\n      devices: all\n      mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field device-filter: ", "at most 8"},
		{"filter empty list", header + "  c:\n    - device-filter: []\n      devices: all\n      mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field device-filter: ", "empty list"},
		{"filter a bool", header + "  c:\n    - device-filter: [true]\n      devices: all\n      mig-enabled: false\n", "f.yaml:4: config \"c\", entry 0, field device-filter: ", "got bool true"},
		{"enabled without devices", header + entry, "f.yaml:4: config \"c\", entry 0, field mig-devices: ", "missing while mig-enabled is true"},
		{"disabled with devices", header + "  c:\n    - devices: all\n      mig-enabled: false\n      mig-devices: {\"1g.5gb\": 1}\n", "f.yaml:4: config \"c\", entry 0, field mig-devices: ", "while mig-enabled is false"},
		{"mig-devices a list", header + entry + "      mig-devices: [1g.5gb]\n", "f.yaml:6: config \"c\", entry 0, field mig-devices: ", "want a mapping, got a list"},
		{"malformed profile", header + entry + "      mig-devices: {\"1g.5\": 1}\n", "f.yaml:6: config \"c\", entry 0, field mig-devices[\"1g.5\"]: ", "malformed MIG profile"},
		{"bad suffix", header + entry + "      mig-devices: {\"1g.5gb+ME\": 1}\n", "f.yaml:6: config \"c\", entry 0, field mig-devices[\"1g.5gb+ME\"]: ", "malformed MIG profile"},
		{"count a string", header + entry + "      mig-devices: {\"1g.5gb\": seven}\n", "f.yaml:6: config \"c\", entry 0, field mig-devices[\"1g.5gb\"]: ", "got the string \"seven\""},
		{"count negative", header + entry + "      mig-devices: {\"1g.5gb\": -1}\n", "f.yaml:6: config \"c\", entry 0, field mig-devices[\"1g.5gb\"]: ", "want an instance count"},
		{"count a float", header + entry + "      mig-devices: {\"1g.5gb\": 1.5}\n", "f.yaml:6: config \"c\", entry 0, field mig-devices[\"1g.5gb\"]: ", "got float 1.5"},
		{"all counts zero", header + entry + "      mig-devices: {\"1g.5gb\": 0}\n", "f.yaml:6: config \"c\", entry 0, field mig-devices: ", "every count is 0"},
		{"repeated profile", header + entry + "      mig-devices:\n        1g.5gb: 1\n        1g.5gb: 2\n", "f.yaml:8: config \"c\", entry 0, field mig-devices: ", "appears twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tc.file))
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %v, want a located *Error", err)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, tc.where) || !strings.Contains(msg[len(tc.where):], tc.reason) {
				t.Errorf("error\n  %s\nwant prefix %q and reason containing %q", msg, tc.where, tc.reason)
			}
		})
	}
}
