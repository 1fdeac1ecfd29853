package cli

import (
	"bytes"
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
	for _, p := range []string{"random", "best-fit", "packing", "fgd", "UNALLOCATED @100%"} {
		if !strings.Contains(a, p) {
			t.Errorf("output lacks %q:\n%s", p, a)
		}
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "a.csv"))
	cb, _ := os.ReadFile(filepath.Join(dir, "b.csv"))
	if len(ca) == 0 || !bytes.Equal(ca, cb) || !strings.HasPrefix(string(ca), "policy,seed,arrived_pct") {
		t.Errorf("curve CSVs empty or different (%d and %d bytes)", len(ca), len(cb))
	}
}

func TestBenchFragCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeTemp(t, dir, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\na,lots,1,1,T4\n")
	pods := writeTemp(t, dir, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,500\n")
	tests := []struct {
		args []string
		// want is a substring of the error.
		want string
	}{
		{[]string{"bench", "frag", "--pods", pods}, "--nodes and --pods are required"},
		{[]string{"bench", "frag", "--nodes", bad, "--pods", pods}, "nodes.csv:2:3: column \"cpu_milli\""},
		{[]string{"bench", "frag", "--nodes", bad, "--pods", pods, "--seeds", "9-1"}, "--seeds"},
		{[]string{"bench", "jct", "--trace", "alibaba:x", "--vc", "y"}, "want philly:FILE"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		if code := Main(tc.args, nil, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}
