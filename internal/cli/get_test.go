package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	itesting "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/view"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// runCommand runs one command built by its constructor (get, top, explain are not
// reached through the root in these tests) and returns its stdout and error.
func runCommand(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

func mustRun(t *testing.T, cmd *cobra.Command, args ...string) string {
	t.Helper()
	out, err := runCommand(t, cmd, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out
}

// explainDoc is what the tests read of explain's -o json (times in seconds).
type explainDoc struct {
	Phase     string   `json:"phase"`
	Submitted bool     `json:"submitted"`
	Layer     string   `json:"layer"`
	Reason    string   `json:"reason"`
	Position  int      `json:"position"`
	T         float64  `json:"t"`
	ETA       *float64 `json:"eta"`
}

// explainJSON is file-mode explain's machine output for one workload.
func explainJSON(t *testing.T, id string, args ...string) explainDoc {
	t.Helper()
	out := mustRun(t, newExplainCommand(), append([]string{id, "-o", "json"}, args...)...)
	var e explainDoc
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("explain %s -o json: %v\n%s", id, err, out)
	}
	return e
}

// The example: at 65m bert-pretrain waits for quota. The row must say what
// explain says, line for line.
func TestGetWorkloadsShowsWhatExplainSays(t *testing.T) {
	files := []string{"-f", "../../examples/", "--at", "65m"}
	out := mustRun(t, newGetCommand(), append([]string{"workloads"}, files...)...)
	row := itesting.TableRows(out, "NAME")["ml-research/bert-pretrain"]
	if row == nil {
		t.Fatalf("no row for ml-research/bert-pretrain:\n%s", out)
	}
	if row["PHASE"] != "Pending" || row["LAYER"] != "admission" || row["REASON"] != "WaitingForQuota" {
		t.Errorf("bert-pretrain row %v, want Pending in the admission layer for WaitingForQuota", row)
	}
	text := mustRun(t, newExplainCommand(), append([]string{"ml-research/bert-pretrain"}, files...)...)
	wantLayer := strings.TrimSuffix(explainField(text, "held by"), " layer")
	if row["PHASE"] != explainField(text, "phase") || row["LAYER"] != wantLayer || row["REASON"] != explainField(text, "reason") ||
		row["POSITION"] != explainField(text, "queue position") || row["QUEUE"] != explainField(text, "clusterQueue") {
		t.Errorf("row %v disagrees with explain:\n%s", row, text)
	}
	e := explainJSON(t, "ml-research/bert-pretrain", files...)
	if e.ETA == nil || row["ETA"] != sim.FormatDuration(sim.Seconds((*e.ETA-e.T)*float64(time.Second))) {
		t.Errorf("ETA column %q, explain's ETA %v s at %v s", row["ETA"], e.ETA, e.T)
	}
}

// Every workload's row agrees with explain at several times.
func TestGetWorkloadsAgreeWithExplainEverywhere(t *testing.T) {
	for _, at := range []string{"0s", "65m", "2h"} {
		files := []string{"-f", "../../examples/", "--at", at}
		rows := itesting.TableRows(mustRun(t, newGetCommand(), append([]string{"workloads"}, files...)...), "NAME")
		if len(rows) == 0 {
			t.Fatalf("--at %s: no workloads listed", at)
		}
		for id, row := range rows {
			e := explainJSON(t, id, files...)
			wantPos := "-"
			if e.Position > 0 {
				wantPos = strconv.Itoa(e.Position)
			}
			if row["PHASE"] != e.Phase && !(row["PHASE"] == string(view.NotYet) && !e.Submitted) {
				t.Errorf("--at %s %s: phase %s, explain %s", at, id, row["PHASE"], e.Phase)
			}
			if row["LAYER"] != dash(e.Layer) || row["REASON"] != dash(reasonCode(e.Reason)) || row["POSITION"] != wantPos {
				t.Errorf("--at %s %s: row %v, explain layer %q reason %q position %d", at, id, row, e.Layer, e.Reason, e.Position)
			}
		}
	}
}

func TestGetFilters(t *testing.T) {
	files := []string{"-f", "../../examples/", "--at", "65m"}
	all := itesting.TableRows(mustRun(t, newGetCommand(), append([]string{"workloads"}, files...)...), "NAME")
	cases := []struct {
		args []string
		keep func(id string, row map[string]string) bool
	}{
		{[]string{"-n", "team-a"}, func(id string, _ map[string]string) bool { return strings.HasPrefix(id, "team-a/") }},
		{[]string{"--queue", "research"}, func(_ string, row map[string]string) bool { return row["QUEUE"] == "research" }},
		{[]string{"-A"}, func(string, map[string]string) bool { return true }},
	}
	for _, c := range cases {
		got := itesting.TableRows(mustRun(t, newGetCommand(), append(append([]string{"workloads"}, files...), c.args...)...), "NAME")
		want := 0
		for id, row := range all {
			if c.keep(id, row) {
				want++
				if got[id] == nil {
					t.Errorf("%v: %s missing", c.args, id)
				}
			}
		}
		if len(got) != want || want == 0 {
			t.Errorf("%v: %d rows, want %d (of %d)", c.args, len(got), want, len(all))
		}
	}
}

// The queue table is the view's queues, rendered: the machine document carries the
// same numbers.
func TestGetQueuesTableMatchesDocument(t *testing.T) {
	files := []string{"-f", "../../examples/", "--at", "65m"}
	rows := itesting.TableRows(mustRun(t, newGetCommand(), append([]string{"queues"}, files...)...), "NAME")
	var doc struct {
		Elapsed int64        `json:"elapsed"`
		Kind    string       `json:"kind"`
		Items   []view.Queue `json:"items"`
	}
	out := mustRun(t, newGetCommand(), append([]string{"queues", "-o", "yaml"}, files...)...)
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o yaml: %v\n%s", err, out)
	}
	if doc.Kind != "queues" || len(doc.Items) != len(rows) || len(rows) == 0 {
		t.Fatalf("document %+v, table %v", doc, rows)
	}
	for _, q := range doc.Items {
		row := rows[q.Name]
		if row["NOMINAL GPU-EQ"] != formatGPU(q.NominalGPU) || row["USED"] != formatGPU(q.UsedGPU) ||
			row["BORROWED"] != formatGPU(q.BorrowedGPU) || row["PENDING"] != strconv.Itoa(q.Pending) ||
			row["ADMITTED"] != strconv.Itoa(q.Admitted) || row["COHORT"] != dash(q.Cohort) || row["HELD"] != yesNo(q.Held) {
			t.Errorf("queue %s: row %v, document %+v", q.Name, row, q)
		}
		if q.NominalGPU <= 0 {
			t.Errorf("queue %s: no nominal GPU quota in the examples' view", q.Name)
		}
	}
}

func TestGetNodesAndCohorts(t *testing.T) {
	files := []string{"-f", "../../examples/", "--at", "65m"}
	var doc struct {
		Items []view.Node `json:"items"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, newGetCommand(), append([]string{"nodes", "-o", "json"}, files...)...)), &doc); err != nil {
		t.Fatal(err)
	}
	rows := itesting.TableRows(mustRun(t, newGetCommand(), append([]string{"no"}, files...)...), "NAME")
	if len(rows) != len(doc.Items) || len(rows) == 0 {
		t.Fatalf("%d rows, %d nodes", len(rows), len(doc.Items))
	}
	for _, n := range doc.Items {
		if got, want := rows[n.Name]["GPUS"], strconv.Itoa(len(n.GPUs)); got != want {
			t.Errorf("node %s: GPUS %s, want %s", n.Name, got, want)
		}
	}
	cohorts := itesting.TableRows(mustRun(t, newGetCommand(), append([]string{"cohorts"}, files...)...), "NAME")
	queues := itesting.TableRows(mustRun(t, newGetCommand(), append([]string{"queues"}, files...)...), "NAME")
	for name, row := range cohorts {
		for _, q := range strings.Split(row["QUEUES"], ",") {
			if queues[q]["COHORT"] != name {
				t.Errorf("cohort %s lists %s, whose cohort is %q", name, q, queues[q]["COHORT"])
			}
		}
	}
}

func TestGetRefusesBadArguments(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"pods", "-f", "../../examples/"}, "want queues, workloads, nodes or cohorts"},
		{[]string{"workloads", "-f", "../../examples/", "--kubeconfig", "/nonexistent"}, "give one or the other"},
		{[]string{"workloads", "--at", "5m", "--kubeconfig", "/nonexistent"}, "--at"},
		{[]string{"workloads", "-n", "a", "-A", "-f", "../../examples/"}, "-n and -A"},
		{[]string{"workloads", "--kubeconfig", "/nonexistent/kubeconfig"}, "/nonexistent/kubeconfig"},
	}
	for _, c := range cases {
		if _, err := runCommand(t, newGetCommand(), c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.args, err, c.want)
		}
	}
}

// Without -f and without any kubeconfig, the error says both ways out.
func TestGetWithoutSourceSaysHow(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, cmd := range []*cobra.Command{newGetCommand(), newTopCommand(), newExplainCommand()} {
		arg := "workloads"
		if cmd.Name() == "explain" {
			arg = "ns/name"
		}
		if cmd.Name() == "top" {
			arg = "queues"
		}
		_, err := runCommand(t, cmd, arg)
		if err == nil || !strings.Contains(err.Error(), "--kubeconfig") || !strings.Contains(err.Error(), "-f PATH") {
			t.Errorf("%s %s: %v, want an error naming --kubeconfig and -f", cmd.Name(), arg, err)
		}
	}
}

// GPU-equivalents are the report's: the queue table at 65m shows the nominal quota,
// use and borrowing the simulation report's quota series has at that time.
func TestGetQueuesAgreeWithReport(t *testing.T) {
	out, errOut, code := runCLI(t, "simulate", "-f", "../../examples/", "-o", "json")
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errOut)
	}
	var rep struct {
		QuotaUse []struct {
			ClusterQueue string `json:"clusterQueue"`
			Nominal      int64  `json:"nominal"`
			Points       []struct {
				T        float64 `json:"t"`
				Used     int64   `json:"used"`
				Borrowed int64   `json:"borrowed"`
			} `json:"points"`
		} `json:"quotaUse"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	queues := map[string]view.Queue{}
	for _, q := range getItems[view.Queue](t, "queues") {
		queues[q.Name] = q
	}
	if len(rep.QuotaUse) == 0 || len(rep.QuotaUse) != len(queues) {
		t.Fatalf("report has %d queues, the view %d", len(rep.QuotaUse), len(queues))
	}
	const at = 65 * 60 // getItems looks at 65m
	for _, r := range rep.QuotaUse {
		q := queues[r.ClusterQueue]
		var used, borrowed int64
		for _, p := range r.Points {
			if p.T <= at {
				used, borrowed = p.Used, p.Borrowed
			}
		}
		if int64(q.NominalGPU) != r.Nominal || int64(q.UsedGPU) != used || int64(q.BorrowedGPU) != borrowed {
			t.Errorf("%s: view nominal %d used %d borrowed %d; report %d, %d, %d", r.ClusterQueue,
				q.NominalGPU, q.UsedGPU, q.BorrowedGPU, r.Nominal, used, borrowed)
		}
	}
}
