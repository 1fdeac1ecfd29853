package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the gantry command line in-process.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestSimulateExamples(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events.jsonl")
	out, errOut, code := runCLI(t, "simulate", "-f", "../../examples/", "--events", events, "--seed", "42")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "QUEUE") || !strings.Contains(out, "all") {
		t.Errorf("summary table missing:\n%s", out)
	}
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			T     *json.Number `json:"t"`
			Event string       `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if rec.T == nil || rec.Event == "" {
			t.Fatalf("line %q lacks t or event", sc.Text())
		}
		kinds[rec.Event]++
	}
	if kinds["submitted"] == 0 || kinds["submitted"] != kinds["finished"] {
		t.Errorf("submitted %d, finished %d: want every example workload to finish", kinds["submitted"], kinds["finished"])
	}
	if progress := errOut; progress != "" {
		t.Errorf("stderr is not a terminal, want no progress bar, got %q", progress)
	}
}

func TestSimulateDeterministicEvents(t *testing.T) {
	dir := t.TempDir()
	var logs [2][]byte
	for i := range logs {
		p := filepath.Join(dir, "ev"+string(rune('a'+i)))
		if _, e, code := runCLI(t, "simulate", "-f", "../../examples/", "--events", p, "--seed", "7"); code != 0 {
			t.Fatalf("run %d: %s", i, e)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = b
	}
	if !bytes.Equal(logs[0], logs[1]) {
		t.Fatal("same inputs and seed gave different event logs")
	}
}

// --retry-all only changes how much work cycles do, never a decision: the event logs
// with and without parking inadmissible workloads are byte-identical.
func TestSimulateRetryAllSameEvents(t *testing.T) {
	dir := t.TempDir()
	var logs [2][]byte
	for i, extra := range [][]string{nil, {"--retry-all"}} {
		p := filepath.Join(dir, "ev"+string(rune('a'+i)))
		args := append([]string{"simulate", "-f", "../../examples/", "--events", p, "--seed", "7"}, extra...)
		if _, e, code := runCLI(t, args...); code != 0 {
			t.Fatalf("run %v: %s", extra, e)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = b
	}
	if len(logs[0]) == 0 || !bytes.Equal(logs[0], logs[1]) {
		t.Fatalf("event logs differ with --retry-all (%d vs %d bytes)", len(logs[0]), len(logs[1]))
	}
}

func TestSimulateBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		// want is a substring of the error.
		want string
	}{
		{[]string{"simulate"}, "-f"},
		{[]string{"simulate", "-f", "../../examples/", "--output", "xml"}, "--output"},
		{[]string{"simulate", "-f", "../../examples/", "--policy", "nope"}, "--policy"},
		{[]string{"simulate", "-f", "../../examples/", "--until", "soon"}, "--until"},
		{[]string{"simulate", "-f", "../../examples/", "--trace", "philly"}, "--trace"},
		{[]string{"explain", "noslash", "-f", "../../examples/"}, "NAMESPACE/NAME"},
	}
	for _, tc := range tests {
		_, errOut, code := runCLI(t, tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error naming %s", tc.args, code, errOut, tc.want)
		}
	}
}

func TestExplainPendingWorkload(t *testing.T) {
	out, errOut, code := runCLI(t, "explain", "ml-research/bert-pretrain", "-f", "../../examples/", "--at", "65m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"phase:", "held by:", "reason:", "queue position:"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := runCLI(t, "explain", "ns/missing", "-f", "../../examples/", "--at", "1m"); code == 0 || !strings.Contains(errOut, "not found") {
		t.Errorf("unknown workload: exit %d, %q", code, errOut)
	}
}
