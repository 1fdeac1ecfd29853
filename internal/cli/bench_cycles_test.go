package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestBenchCyclesCommand(t *testing.T) {
	args := []string{"bench", "cycles", "--nodes", "10", "--jobs", "200", "--queues", "4", "--cohorts", "2", "--quiet", "3", "--bursts", "2", "--burst-size", "5"}
	var out, errOut bytes.Buffer
	if code := Main(args, nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, p := range []string{"10 nodes, 200 pending in 4 queues (2 cohorts)", "first cycle", "decisions", "quiet cycles  3:", "burst cycles  2 after 5 completions"} {
		if !strings.Contains(out.String(), p) {
			t.Errorf("table lacks %q:\n%s", p, out.String())
		}
	}
	out.Reset()
	if code := Main(append(args, "-o", "json"), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var r struct {
		Pending, FirstDecisions, FirstAdmitted int
		QuietNs, BurstNs                       []int64
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if r.Pending != 200 || r.FirstDecisions != 200 || r.FirstAdmitted == 0 || len(r.QuietNs) != 3 || len(r.BurstNs) != 2 {
		t.Errorf("json: %+v", r)
	}
}

func TestBenchCyclesCommandErrors(t *testing.T) {
	for flag, args := range map[string][]string{
		"--nodes":      {"--nodes", "0"},
		"--quiet":      {"--quiet", "-1"},
		"--burst-size": {"--bursts", "1", "--burst-size", "0"},
		"--output":     {"-o", "xml"},
	} {
		var out, errOut bytes.Buffer
		if code := Main(append([]string{"bench", "cycles"}, args...), nil, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), flag) {
			t.Errorf("%v: exit %d, stderr %q: want an error naming %s", args, code, errOut.String(), flag)
		}
	}
}
