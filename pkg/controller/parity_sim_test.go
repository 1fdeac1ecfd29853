package controller_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/cli"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// simRecord is one line of `gantry simulate --events` (sim.EventRecord as written; its
// times are JSON seconds, which sim.Seconds does not read back).
type simRecord struct {
	T            json.Number `json:"t"`
	Event        string      `json:"event"`
	Workload     string      `json:"workload"`
	ClusterQueue string      `json:"clusterQueue"`
	Flavor       string      `json:"flavor"`
	Pods         []struct {
		Name    string   `json:"name"`
		Node    string   `json:"node"`
		Devices []string `json:"devices"`
	} `json:"pods"`
	Reason string       `json:"reason"`
	By     string       `json:"by"`
	ETA    *json.Number `json:"eta"`

	at time.Duration // T as a duration
}

// runSimulate runs `gantry simulate -f dir --events FILE` in-process, with the policy
// the controller under test gets spelled out as flags (they are simulate's defaults),
// and returns the event log.
func runSimulate(t *testing.T, dir string, pol engine.Policy) []simRecord {
	t.Helper()
	events := filepath.Join(t.TempDir(), "events.jsonl")
	var out, errb bytes.Buffer
	args := []string{"simulate", "-f", dir, "--events", events, "-o", "json",
		"--seed", strconv.FormatInt(pol.Seed, 10), "--grace", pol.Grace.String()}
	if code := cli.Main(args, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("gantry %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var log []simRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r simRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("event log line %q: %v", sc.Text(), err)
		}
		if r.at, err = seconds(r.T); err != nil {
			t.Fatalf("event log line %q: t: %v", sc.Text(), err)
		}
		log = append(log, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return log
}

// seconds reads a JSON number of seconds (up to millisecond precision).
func seconds(n json.Number) (time.Duration, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(f*1000+0.5) * time.Millisecond, nil
}

// instants are the distinct times of the log up to horizon, in order: the instants at
// which the simulator decided something (the first is always 0: every scenario
// submits work then).
func instants(log []simRecord, horizon time.Duration) []time.Duration {
	out := []time.Duration{0}
	for _, r := range log {
		if r.at <= horizon && r.at != out[len(out)-1] {
			out = append(out, r.at)
		}
	}
	return out
}

// eventsAt lists the workloads of the log's records of one kind at instant at.
func eventsAt(log []simRecord, event string, at time.Duration) []string {
	var out []string
	for _, r := range log {
		if r.at == at && r.Event == event && r.Workload != "" {
			out = append(out, r.Workload)
		}
	}
	return out
}

// submittedBy lists the workloads submitted at or before instant at.
func submittedBy(log []simRecord, at time.Duration) []string {
	var out []string
	for _, r := range log {
		if r.at <= at && r.Event == string(sim.EvSubmitted) {
			out = append(out, r.Workload)
		}
	}
	return out
}

// simDecisions replays the log up to instant at: where every workload stands then, and
// what was admitted at that instant (in log order: the order of the plan's admissions)
// with its flavors and pods.
func simDecisions(log []simRecord, at time.Duration) decisions {
	d := newDecisions(at)
	for _, r := range log {
		if r.at > at {
			break
		}
		if r.Workload == "" {
			continue // node and quota records
		}
		v := d.workloads[r.Workload]
		switch sim.EventKind(r.Event) {
		case sim.EvSubmitted, sim.EvEvicted, sim.EvRequeued:
			v = wlView{phase: phasePending}
		case sim.EvAdmitted:
			v = wlView{phase: phaseAdmitted}
			if r.at == at {
				d.admitted = append(d.admitted, r.Workload)
				d.placed[r.Workload] = placement{flavors: r.Flavor, pods: map[string]podAt{}}
			}
		case sim.EvPlaced:
			if p, ok := d.placed[r.Workload]; ok && r.at == at {
				name := r.Workload[strings.Index(r.Workload, "/")+1:]
				for _, pod := range r.Pods {
					p.pods[strings.TrimPrefix(pod.Name, name+"-")] = podAt{node: pod.Node, devices: deviceSet(pod.Devices)}
				}
			}
		case sim.EvReserved:
			v = wlView{phase: phaseReserved}
			if r.ETA != nil {
				eta, err := seconds(*r.ETA)
				if err == nil {
					v.eta = eta.Truncate(time.Second) // the Workload status holds whole seconds
				}
			}
			var nodes []string
			for _, p := range r.Pods {
				nodes = append(nodes, p.Node)
			}
			v.nodes = nodeSet(nodes)
		case sim.EvRejected:
			code, _, _ := strings.Cut(r.Reason, ":")
			v = wlView{phase: phasePending, reason: code}
		case sim.EvPreempted:
			v.phase, v.by = phaseNoticed, r.By
		case sim.EvFinished:
			v = wlView{phase: phaseFinished}
		}
		d.workloads[r.Workload] = v
	}
	return d
}

// deviceSet and nodeSet normalise lists for comparison: sorted, comma-joined.
func deviceSet(ids []string) string {
	s := append([]string(nil), ids...)
	sort.Strings(s)
	return strings.Join(s, ",")
}

func nodeSet(nodes []string) string {
	seen := map[string]bool{}
	var s []string
	for _, n := range nodes {
		if n != "" && !seen[n] {
			seen[n] = true
			s = append(s, n)
		}
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}
