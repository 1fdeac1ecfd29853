package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestNodeAgentDryRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// wantCode is the exit code; wantOut and wantErr fragments of stdout and stderr.
		wantCode int
		wantOut  []string
		wantErr  string
	}{
		{"mock DGX A100", []string{"node-agent", "--dry-run", "--mock", "dgx-a100"}, 0,
			[]string{"model A100-SXM4-40GB", "nvidia.com/gpu: 8 [GPU-0 GPU-1", "nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB", "gantry.dev/nvlink-domains=1"}, ""},
		{"mock with a MIG layout", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--mig-layout", "all-3g.20gb"}, 0,
			[]string{"[3g.20gb@0 3g.20gb@4]", "nvidia.com/gpu: 16", "nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB-MIG-3g.20gb"}, "applied all-3g.20gb"},
		{"real NVML in a default build", []string{"node-agent", "--dry-run"}, 1, nil, "rebuild with -tags nvml"},
		{"unknown mock", []string{"node-agent", "--dry-run", "--mock", "dgx-h100"}, 1, nil, `--mock "dgx-h100"`},
		{"bad sharing", []string{"node-agent", "--dry-run", "--mock", "dgx-a100", "--sharing", "half"}, 1, nil, `--sharing "half"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
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
