package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	gt "github.com/gantry-sched/gantry/internal/testing"
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
		{[]string{"simulate", "-f", "../../examples/", "--head-order", "fastest"}, `--head-order "fastest"`},
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

// explainField returns the value of one "name: value" line of explain's output.
func explainField(out, name string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// --at 0s is t=0, not the end of the run: team-a/llm-finetune is placed at t=0 in the
// examples and runs for 75 minutes of the 2h10m simulation.
func TestExplainAt(t *testing.T) {
	tests := []struct {
		name              string
		at                []string
		wantAt, wantPhase string
		wantPods          bool
	}{
		{"no --at: the end of the run", nil, "2h10m", "Finished", false},
		{"--at 0s", []string{"--at", "0s"}, "0s", "Running", true},
		{"--at 0", []string{"--at", "0"}, "0s", "Running", true},
		{"--at 30m", []string{"--at", "30m"}, "30m00s", "Running", true},
		{"--at past the end", []string{"--at", "3h"}, "3h00m", "Finished", false},
	}
	for _, tc := range tests {
		args := append([]string{"explain", "team-a/llm-finetune", "-f", "../../examples/"}, tc.at...)
		out, errOut, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errOut)
		}
		at, phase := explainField(out, "at"), explainField(out, "phase")
		if at != tc.wantAt || phase != tc.wantPhase || strings.Contains(out, "pod llm-finetune-main-0 on") != tc.wantPods {
			t.Errorf("%s: at %q phase %q, want at %q phase %q (pods listed: %v):\n%s", tc.name, at, phase, tc.wantAt, tc.wantPhase, tc.wantPods, out)
		}
	}
}

func TestExplainAtBadValues(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--at", "soon"}, "--at"},
		{[]string{"--at", "2h", "--until", "1h"}, "after --until 1h00m"},
	}
	for _, tc := range tests {
		args := append([]string{"explain", "team-a/llm-finetune", "-f", "../../examples/"}, tc.args...)
		if _, errOut, code := runCLI(t, args...); code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error naming %q", tc.args, code, errOut, tc.want)
		}
	}
}

// The PREEMPTED and SPOT INTERRUPTED columns count the event log's "preempted" and
// "interrupted" records of each queue: the examples have both (a spot interruption at
// 40m in queue batch and a preemption).
func TestSimulatePreemptionColumnsMatchEventLog(t *testing.T) {
	for _, policy := range []string{"default", "fifo"} {
		events := filepath.Join(t.TempDir(), "events.jsonl")
		out, errOut, code := runCLI(t, "simulate", "-f", "../../examples/", "--policy", policy, "--events", events)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", policy, code, errOut)
		}
		want := eventCountsByQueue(t, events)
		preempted := 0
		for _, counts := range want {
			preempted += counts["preempted"]
		}
		if policy == "default" && (preempted == 0 || want["batch"]["interrupted"] == 0) {
			t.Fatalf("examples no longer preempt, or interrupt in queue batch: %v", want)
		}
		rows := gt.TableRows(out, "QUEUE")
		if rows["batch"] == nil {
			t.Fatalf("%s: no batch row in the QUEUE table:\n%s", policy, out)
		}
		for queue, row := range rows {
			if queue == "all" {
				continue
			}
			got := row["PREEMPTED"] + "/" + row["SPOT INTERRUPTED"]
			exp := fmt.Sprintf("%d/%d", want[queue]["preempted"], want[queue]["interrupted"])
			if got != exp {
				t.Errorf("%s: queue %s preempted/interrupted = %s, event log has %s", policy, queue, got, exp)
			}
		}
	}
}

// eventCountsByQueue counts an event log's records by ClusterQueue and kind.
func eventCountsByQueue(t *testing.T, path string) map[string]map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct{ Event, ClusterQueue string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if counts[rec.ClusterQueue] == nil {
			counts[rec.ClusterQueue] = map[string]int{}
		}
		counts[rec.ClusterQueue][rec.Event]++
	}
	return counts
}

// -o json and -o yaml print the same KPI document.
func TestSimulateOutputFormats(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		out, errOut, code := runCLI(t, "simulate", "-f", "../../examples/", "-o", format)
		if code != 0 {
			t.Fatalf("-o %s: exit %d: %s", format, code, errOut)
		}
		var doc struct {
			Overall struct{ Submitted, Preempted, Interrupted int }
		}
		if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("-o %s: not a document: %v\n%s", format, err, out)
		}
		if doc.Overall.Submitted != 14 || doc.Overall.Preempted != 2 || doc.Overall.Interrupted != 2 {
			t.Errorf("-o %s: overall = %+v, want 14 submitted, 2 preempted, 2 interrupted", format, doc.Overall)
		}
	}
}

// A workload without gantry.dev/duration never finishes: simulate says so on stderr.
func TestSimulateWarnsOfWorkloadsWithoutDuration(t *testing.T) {
	dir := t.TempDir()
	job := "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: forever\n  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: training}\n" +
		"spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n        image: x\n        resources:\n          limits: {nvidia.com/gpu: \"1\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "forever.yaml"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"simulate", "-f", "../../examples", "-f", dir, "--until", "1h"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if want := "warning: 1 workload has no gantry.dev/duration"; !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "team-a/forever") {
		t.Errorf("stderr %q, want %q naming team-a/forever", errOut.String(), want)
	}
}

// --heatmap-at adds heat maps at chosen times after the busiest one; a bad time is refused.
func TestSimulateHeatmapAt(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"simulate", "-f", "../../examples", "--heatmap-at", "30m,1h", "-o", "json"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep struct {
		Heatmaps []struct {
			T float64 `json:"t"`
		} `json:"heatmaps"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Heatmaps) != 3 || rep.Heatmaps[1].T != 1800 || rep.Heatmaps[2].T != 3600 {
		t.Errorf("heat maps at %+v, want the busiest moment, then 1800 s and 3600 s", rep.Heatmaps)
	}
	errOut.Reset()
	if code := Main([]string{"simulate", "-f", "../../examples", "--heatmap-at", "soon"}, strings.NewReader(""), &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), `--heatmap-at "soon"`) {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

// --head-order reaches the engine: with priority the borrowing high-priority job starts
// first, with kueue the one within its queue's nominal quota does.
func TestSimulateHeadOrder(t *testing.T) {
	for order, first := range map[string]string{"priority": "borrower", "kueue": "owner"} {
		out, errOut, code := runCLI(t, "simulate", "-f", "testdata/head-order.yaml", "--head-order", order)
		if code != 0 {
			t.Fatalf("--head-order %s: exit %d: %s", order, code, errOut)
		}
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) < 10 || (f[0] != "owner" && f[0] != "borrower") {
				continue
			}
			if started := f[5] == "0s"; started != (f[0] == first) {
				t.Errorf("--head-order %s: queue %s waits %s; want %s to start first", order, f[0], f[5], first)
			}
		}
	}
}
