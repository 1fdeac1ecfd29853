package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSeeds(t *testing.T) {
	tests := []struct {
		in string
		// want is the expanded seed list; nil with wantErr.
		want    []int64
		wantErr bool
	}{
		{"42", []int64{42}, false},
		{"42-45", []int64{42, 43, 44, 45}, false},
		{"1,5-6,9", []int64{1, 5, 6, 9}, false},
		{"5-4", nil, true},
		{"x", nil, true},
		{"1-", nil, true},
	}
	for _, tc := range tests {
		got, err := parseSeeds(tc.in)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseSeeds(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// writeTemp writes name with content into dir and returns its path.
func writeTemp(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBenchFragCommand(t *testing.T) {
	dir := t.TempDir()
	nodes := writeTemp(t, dir, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\na,64000,262144,2,P100\nb,96000,786432,8,G2\nc,32000,131072,4,T4\n")
	pods := writeTemp(t, dir, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,4000,8192,1,500\np1,8000,16384,1,1000\np2,2000,4096,1,250\np3,16000,65536,4,1000\np4,1000,2048,0,0\np5,6000,12288,1,460\n")
	run := func(csvPath string) string {
		var out, errOut bytes.Buffer
		code := Main([]string{"bench", "frag", "--nodes", nodes, "--pods", pods, "--seeds", "1-3", "--csv", csvPath}, nil, &out, &errOut)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if !strings.Contains(errOut.String(), "per seed") {
			t.Errorf("no timing on stderr: %q", errOut.String())
		}
		return out.String()
	}
	a := run(filepath.Join(dir, "a.csv"))
	b := run(filepath.Join(dir, "b.csv"))
	if a != b {
		t.Errorf("two runs with the same seeds print different results:\n%s\n%s", a, b)
	}
	for _, p := range []string{"random", "dotprod", "clustering", "packing", "bestfit", "fgd", "gantry", "default", "OF ARRIVED @100%", "OF CAPACITY @130.0%"} {
		if !strings.Contains(a, p) {
			t.Errorf("output lacks %q:\n%s", p, a)
		}
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "a.csv"))
	cb, _ := os.ReadFile(filepath.Join(dir, "b.csv"))
	if len(ca) == 0 || !bytes.Equal(ca, cb) || !strings.HasPrefix(string(ca), "variant,policy,seed,arrived_pct") {
		t.Errorf("curve CSVs empty or different (%d and %d bytes)", len(ca), len(cb))
	}
}

func TestBenchFragCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeTemp(t, dir, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\na,lots,1,1,T4\n")
	good := writeTemp(t, dir, "good.csv", "sn,cpu_milli,memory_mib,gpu,model\na,1000,1000,1,T4\n")
	pods := writeTemp(t, dir, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,500\n")
	noGPUCount := writeTemp(t, dir, "nocount.csv", "name,cpu_milli,memory_mib,gpu_milli\np0,1,1,500\n")
	negative := writeTemp(t, dir, "negative.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,-5,1,1,500\n")
	tests := []struct {
		args []string
		// want is a substring of the error.
		want string
	}{
		{[]string{"bench", "frag", "--pods", pods}, "--nodes and --pods are required"},
		{[]string{"bench", "frag", "--nodes", bad, "--pods", pods}, "nodes.csv:2:3: column \"cpu_milli\""},
		{[]string{"bench", "frag", "--nodes", bad, "--pods", pods, "--seeds", "9-1"}, "--seeds"},
		{[]string{"bench", "frag", "--variants", "all", "--pods", pods}, "exclude each other"},
		{[]string{"bench", "frag", "--nodes", good, "--pods", pods, "--policy", "tetris"}, `--policy "tetris": want all or one of`},
		{[]string{"bench", "frag", "--nodes", good, "--pods", noGPUCount}, `column "num_gpu": required column missing`},
		{[]string{"bench", "frag", "--nodes", good, "--pods", negative}, `column "cpu_milli": -5 is out of range`},
		{[]string{"bench", "frag", "--variants", "nosuch", "--trace-dir", dir, "--nodes", good}, "openb_pod_list_nosuch.csv"},
		{[]string{"bench", "jct", "--trace", "alibaba:x", "--vc", "y"}, "want philly:FILE"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		if code := Main(tc.args, nil, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

// --variants runs pod lists from a trace directory; the markdown and JSON carry every
// variant, both measures and the input findings (a pod no node can hold is reported).
func TestBenchFragVariants(t *testing.T) {
	dir := t.TempDir()
	writeTemp(t, dir, "openb_node_list_gpu_node.csv", "sn,cpu_milli,memory_mib,gpu,model\na,64000,262144,2,P100\nb,96000,786432,8,G2\n")
	writeTemp(t, dir, "openb_pod_list_default.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,4000,8192,1,500,\np1,8000,16384,1,1000,G2\np2,2000,4096,1,250,\n")
	writeTemp(t, dir, "openb_pod_list_cpu050.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np0,4000,8192,1,500,\np1,1000,2048,0,0,\np2,8000,16384,16,1000,\n")
	md := filepath.Join(dir, "frag.md")
	var out, errOut bytes.Buffer
	args := []string{"bench", "frag", "--variants", "default,cpu050", "--trace-dir", dir, "--policy", "fgd,gantry", "--seeds", "1-2", "--markdown", md, "-o", "json"}
	if code := Main(args, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res []struct {
		Variant   string                     `json:"variant"`
		Input     struct{ NeverFitPods int } `json:"input"`
		Summaries []struct {
			Policy string `json:"policy"`
			At100  struct {
				OfArrived  struct{ Mean float64 } `json:"unallocatedOfArrived"`
				OfCapacity struct{ Mean float64 } `json:"unallocatedOfCapacity"`
			} `json:"at100"`
		} `json:"summaries"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out.String())
	}
	if len(res) != 2 || res[0].Variant != "default" || res[1].Variant != "cpu050" || len(res[0].Summaries) != 2 {
		t.Fatalf("results %+v", res)
	}
	if res[1].Input.NeverFitPods != 1 {
		t.Errorf("cpu050: %d pods reported as fitting nowhere, want the 16-GPU one", res[1].Input.NeverFitPods)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| default |", "| cpu050 |", "paper's fgd", "Input `cpu050`: 1 pods fit no node"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b)
		}
	}
}
