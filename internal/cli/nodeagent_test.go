//go:build cgo

package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNodeAgentDryRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  string // DP_DISABLE_HEALTHCHECKS
		// wantCode is the exit code; wantOut and wantErr fragments of stdout and stderr.
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"mock DGX A100", []string{"node-agent", "--dry-run", "--mock", "dgx-a100"}, "", 0,
			[]string{"model A100-SXM4-40GB", "driver 550.54.15, CUDA 12.4", "nvidia.com/gpu: 8 [GPU-0 GPU-1", "nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB", "gantry.dev/nvlink-domains=1"}, ""},
		{"mock DGX H100", []string{"node-agent", "--dry-run", "--mock", "dgx-h100"}, "", 0,
			[]string{"model H100-SXM5-80GB", "nvidia.com/gpu: 8 ["}, ""},
		{"mock DGX H200", []string{"node-agent", "--dry-run", "--mock", "dgx-h200"}, "", 0,
			[]string{"model H200-141GB"}, ""},
		{"mock DGX B200", []string{"node-agent", "--dry-run", "--mock", "dgx-b200"}, "", 0,
			[]string{"model B200-180GB", "driver 560.28.03"}, ""},
		{"mock with a MIG config", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--mig-config", "all-3g.20gb"}, "", 0,
			[]string{"[3g.20gb@0 3g.20gb@4]", "nvidia.com/gpu: 16", "MIG profiles of GPU 0 (NVML):", "1g.5gb              4864 MiB  starts 0,1,2,3,4,5,6"},
			"MIG config all-3g.20gb applied"},
		{"unknown MIG config", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--mig-config", "all-9g.1tb"}, "", 1, nil, "all-9g.1tb"},
		{"real NVML without the driver", []string{"node-agent", "--dry-run", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"}, "", 1, nil,
			"initialising NVML (/nonexistent/libnvidia-ml.so.1): ERROR_LIBRARY_NOT_FOUND"},
		{"unknown mock", []string{"node-agent", "--dry-run", "--mock", "dgx-x1"}, "", 1, nil, `--mock: unknown mock machine "dgx-x1": want one of dgx-a100, dgx-h100, dgx-h200, dgx-b200`},
		{"mock needs dry-run", []string{"node-agent", "--mock", "dgx-a100"}, "", 1, nil, "--mock and --mig-config need --dry-run"},
		{"bad sharing", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--sharing", "half"}, "", 1, nil, `--sharing "half"`},
		{"bad DP_DISABLE_HEALTHCHECKS", []string{"node-agent", "--dry-run", "--mock", "dgx-a100"}, "48,x", 1, nil,
			`DP_DISABLE_HEALTHCHECKS="48,x": entry "x" is neither`},
		{"DP_DISABLE_HEALTHCHECKS=all is accepted", []string{"node-agent", "--dry-run", "--mock", "dgx-a100"}, "all", 0, []string{"model A100-SXM4-40GB"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("DP_DISABLE_HEALTHCHECKS", tc.env)
			var out, errOut bytes.Buffer
			code := Main(tc.args, strings.NewReader(""), &out, &errOut)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.wantCode, errOut.String())
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			if !strings.Contains(errOut.String(), tc.wantErr) {
				t.Errorf("stderr lacks %q: %s", tc.wantErr, errOut.String())
			}
		})
	}
}

// NVIDIA's device-plugin config file sets the sharing, as on a node that ran NVIDIA's
// plugin; flags it does not act on are named on stderr, and a bad file is refused.
func TestNodeAgentPluginConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(good, []byte("version: v1\nflags:\n  plugin:\n    passDeviceSpecs: true\n"+
		"sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replica: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--config", good}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, w := range []string{"nvidia.com/gpu: 32 [", "nvidia.com/gpu.replicas=4", "nvidia.com/gpu.sharing-strategy=time-slicing"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("stdout lacks %q:\n%s", w, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "config.yaml:4: flags.plugin.passDeviceSpecs: ignored") {
		t.Errorf("stderr lacks the ignored-flag warning: %s", errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Main([]string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--config", bad}, strings.NewReader(""), &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "bad.yaml: yaml: unmarshal errors:\n  line 6: field replica not found") {
		t.Errorf("exit %d, stderr %q; want 1 and the unknown field with its line", code, errOut.String())
	}
}

// --dry-run -o json prints the same facts as a document.
func TestNodeAgentDryRunJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"node-agent", "--dry-run", "--mock", "dgx-a100", "-o", "json"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got dryRun
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if got.Model != "A100-SXM4-40GB" || len(got.GPUs) != 8 || len(got.Resources["nvidia.com/gpu"]) != 8 ||
		got.Labels["nvidia.com/gpu.product"] != "NVIDIA-A100-SXM4-40GB" || got.GPUs[1].BusID != "0000:0f:00.0" {
		t.Errorf("document %+v", got)
	}
}
