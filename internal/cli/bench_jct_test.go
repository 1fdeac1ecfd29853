package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchJCTCommand(t *testing.T) {
	dir := t.TempDir()
	// vc a has one 8-GPU node, b one: a's two 8-GPU jobs contend for a's quota and b's lendable node.
	jobs := writeTemp(t, dir, "philly.csv", `timestamp,duration,num_gpus,gpu_time,cluster
2017-10-01 00:00:00,3600.0,8,28800.0,a
2017-10-01 00:00:10,3600.0,8,28800.0,a
2017-10-01 00:00:20,3600.0,8,28800.0,a
2017-10-01 00:00:30,60.0,1,60.0,b
`)
	vcs := writeTemp(t, dir, "vc.csv", "vc,node num\na,1\nb,1\n")
	var out, errOut bytes.Buffer
	code := Main([]string{"bench", "jct", "--trace", "philly:" + jobs, "--vc", vcs, "--from", "2017-10-01", "--to", "2017-10-01",
		"--report", filepath.Join(dir, "r.html")}, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, p := range []string{"fifo", "gantry", "sjf", "AVG JCT", "P95 WAIT"} {
		if !strings.Contains(out.String(), p) {
			t.Errorf("output lacks %q:\n%s", p, out.String())
		}
	}
	// Three 8-GPU jobs on two nodes: one of them must wait an hour under every policy.
	for _, line := range strings.Split(out.String(), "\n")[1:] {
		if f := strings.Fields(line); len(f) == 6 && (f[2] != "4" || f[5] == "0s") {
			t.Errorf("row %q: want 4 finished and a non-zero p95 wait", line)
		}
	}
	if html, err := os.ReadFile(filepath.Join(dir, "r.html")); err != nil || !strings.Contains(string(html), "chart-wait-cdf") {
		t.Errorf("HTML report missing or without charts: %v", err)
	}
}
