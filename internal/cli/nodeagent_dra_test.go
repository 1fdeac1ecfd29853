//go:build cgo

package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/draplugin"
)

func TestNodeAgentDRADryRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		notOut   []string
		wantErr  string
	}{
		{"whole GPUs", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--dra"}, 0,
			[]string{"DRA devices (gpu.nvidia.com): 8", "gpu-0 ", "gpu-7 ", "40Gi"}, nil, ""},
		{"MIG devices", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--mig-config", "all-3g.20gb", "--dra"}, 0,
			[]string{"DRA devices (gpu.nvidia.com): 16", "gpu-0-mig-3g20gb-9-0", "gpu-7-mig-3g20gb-9-4", "3g.20gb"}, []string{"gpu-0 "}, ""},
		{"all-dynamic: every placement published, no device plugin resource", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--mig-config", "all-dynamic", "--dra"}, 0,
			[]string{"DRA devices (gpu.nvidia.com): 208", "gpu-0 ", "gpu-0-mig-3g20gb-9-0", "gpu-0-mig-3g20gb-9-4", "gpu-7-mig-7g40gb-0-0", "nvidia.com/gpu.count=8"},
			[]string{"nvidia.com/gpu: ", "nvidia.com/mig-"}, "MIG config all-dynamic applied"},
		{"all-dynamic needs --dra", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--mig-config", "all-dynamic"}, 1, nil, nil,
			"--mig-config: MIG config all-dynamic leaves MIG instances to DRA claims, and this agent does not serve the DRA kubelet plugin: run it with --dra"},
		{"no DRA section without --dra", []string{"node-agent", "--dry-run", "--mock", "dgx-a100"}, 0, nil, []string{"DRA devices"}, ""},
		{"neither plugin", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--device-plugin=false"}, 1, nil, nil,
			"--device-plugin=false needs --dra"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Main(tc.args, strings.NewReader(""), &out, &errOut); code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.wantCode, errOut.String())
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.notOut {
				if strings.Contains(out.String(), w) {
					t.Errorf("stdout has %q:\n%s", w, out.String())
				}
			}
			if !strings.Contains(errOut.String(), tc.wantErr) {
				t.Errorf("stderr lacks %q: %s", tc.wantErr, errOut.String())
			}
		})
	}
}

// With -o json the DRA devices come as draDevices, with their UUIDs.
func TestNodeAgentDRADryRunJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--dra", "-o", "json"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got dryRun
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if len(got.DRADevices) != 8 || got.DRADevices[2].Name != "gpu-2" || got.DRADevices[2].Type != "gpu" ||
		got.DRADevices[2].UUID != got.GPUs[2].UUID || got.DRADevices[2].Memory != "40Gi" {
		t.Errorf("draDevices %+v", got.DRADevices)
	}
}

// The serving agent's DRA plugin carves the MIG instances of all-dynamic GPUs through
// the agent's own NVML handle: the config it builds creates the instance a claim was
// allocated on the node, and destroys it again.
func TestNodeAgentDRAConfigCarvesThroughTheAgentsNVML(t *testing.T) {
	mock := mocknode.MakeNode(t).Sharing(devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic})
	n := draplugin.NodeFromDiscovery("n1", mock.Discover(), nil)
	f := nodeAgentFlags{draRegistrar: "/reg", draPluginDir: "/plugin", cdiDir: "/cdi"}
	cfg := draConfig(f, io.Discard, nil, mock.Server(), n)
	if cfg.RegistrarDir != "/reg" || cfg.PluginDir != "/plugin" || cfg.CDIDir != "/cdi" {
		t.Errorf("directories %q %q %q, want the flags'", cfg.RegistrarDir, cfg.PluginDir, cfg.CDIDir)
	}
	if cfg.MIG == nil {
		t.Fatal("no MIG carver: claims on dynamic placements could not be prepared")
	}
	in := devices.Instance{Profile: "3g.20gb", Start: 4}
	uuid, err := cfg.MIG.Create(2, in)
	if err != nil {
		t.Fatal(err)
	}
	fixed := func() []nodeagent.MIGDevice {
		d, err := nodeagent.Discover(mock.Server(), devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed})
		if err != nil {
			t.Fatal(err)
		}
		return d.GPUs[2].MIG
	}
	if got := fixed(); len(got) != 1 || got[0].Instance != in || got[0].UUID != uuid {
		t.Fatalf("GPU 2 holds %+v, want %s with UUID %s", got, in, uuid)
	}
	if err := cfg.MIG.Destroy(2, in); err != nil {
		t.Fatal(err)
	}
	if got := fixed(); len(got) != 0 {
		t.Errorf("GPU 2 still holds %+v after Destroy", got)
	}
}
