package controller_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// Where a workload stands at an instant, as either side sees it.
const (
	phaseAbsent   = "absent" // the controller has no Workload for a submitted job
	phasePending  = "pending"
	phaseReserved = "reserved"
	phaseAdmitted = "admitted"
	phaseNoticed  = "admitted under preemption notice"
	phaseFinished = "finished"
)

// wlView is one workload at an instant.
type wlView struct {
	phase  string
	reason string        // pending: the reason code of its last rejection
	by     string        // under notice: the workload it makes room for
	eta    time.Duration // reserved: since the simulation's epoch, whole seconds
	nodes  string        // reserved: the nodes held, sorted, comma-joined
}

func (v wlView) String() string {
	switch v.phase {
	case "":
		return "not submitted"
	case phaseAbsent:
		return "no Workload for the job"
	case phasePending:
		if v.reason == "" {
			return "pending (no reason given)"
		}
		return "pending (" + v.reason + ")"
	case phaseReserved:
		return fmt.Sprintf("reserved (ETA %s on %s)", v.eta, v.nodes)
	case phaseNoticed:
		return phaseNoticed + " for " + v.by
	}
	return v.phase
}

// placement is an admission's flavors (every pod set's, sorted, comma-joined, as the
// simulator logs them) and where each pod goes, by slot "<pod set>-<index>".
type placement struct {
	flavors string
	pods    map[string]podAt
}

// podAt is a pod's node and devices (sorted, comma-joined).
type podAt struct{ node, devices string }

// decisions is what one side decided by an instant.
type decisions struct {
	at        time.Duration
	workloads map[string]wlView // by job "namespace/name"
	// admitted lists the admissions made at this instant in commit order; placed holds
	// their placements.
	admitted []string
	placed   map[string]placement
	// bound are the controller's bound pods of the workloads admitted at this instant,
	// by slot (the pods' node and gantry.dev/devices annotation).
	bound map[string]map[string]podAt
}

func newDecisions(at time.Duration) decisions {
	return decisions{at: at, workloads: map[string]wlView{}, placed: map[string]placement{}, bound: map[string]map[string]podAt{}}
}

// diffDecisions lists every difference, one line each: the instant, the workload, the
// field, the simulator's value and the controller's.
func diffDecisions(simd, ctl decisions) []string {
	at := simd.at
	var out []string
	add := func(wl, field, s, c string) {
		out = append(out, fmt.Sprintf("t=%s %s: %s: simulator %s, controller %s", at, wl, field, s, c))
	}
	for _, wl := range unionKeys(simd.workloads, ctl.workloads) {
		s, c := simd.workloads[wl], ctl.workloads[wl]
		if s == c {
			continue
		}
		field := "state"
		switch {
		case s.phase != c.phase:
		case s.phase == phasePending:
			field = "pending reason"
		case s.phase == phaseNoticed:
			field = "preempted for"
		case s.phase == phaseReserved && s.eta != c.eta:
			field = "reservation ETA"
		case s.phase == phaseReserved:
			field = "reserved nodes"
		}
		add(wl, field, s.String(), c.String())
	}
	if strings.Join(simd.admitted, " ") != strings.Join(ctl.admitted, " ") {
		out = append(out, fmt.Sprintf("t=%s admissions at this instant, in order: simulator [%s], controller [%s]",
			at, strings.Join(simd.admitted, " "), strings.Join(ctl.admitted, " ")))
	}
	for _, wl := range unionKeys(simd.placed, ctl.placed) {
		s, okS := simd.placed[wl]
		c, okC := ctl.placed[wl]
		if !okS || !okC {
			continue // admitted by one side only: reported above
		}
		if s.flavors != c.flavors {
			add(wl, "flavors", quote(s.flavors), quote(c.flavors))
		}
		for _, slot := range unionKeys(s.pods, c.pods) {
			sp, okS := s.pods[slot]
			cp, okC := c.pods[slot]
			switch {
			case !okS:
				add(wl, "pod "+slot, "has no such pod", "places it on "+cp.node)
			case !okC:
				add(wl, "pod "+slot, "places it on "+sp.node, "has no placement for it")
			default:
				if sp.node != cp.node {
					add(wl, "pod "+slot+" node", sp.node, cp.node)
				}
				if sp.devices != cp.devices {
					add(wl, "pod "+slot+" devices", quote(sp.devices), quote(cp.devices))
				}
			}
		}
		// The pods as bound on the cluster (node, gantry.dev/devices annotation) must
		// be where the simulator put them too.
		for _, slot := range unionKeys(ctl.bound[wl], nil) {
			bp := ctl.bound[wl][slot]
			sp, ok := s.pods[slot]
			switch {
			case !ok:
				add(wl, "bound pod "+slot, "has no such pod", "bound it to "+bp.node)
			case sp.node != bp.node:
				add(wl, "bound pod "+slot+" node", sp.node, bp.node)
			case sp.devices != bp.devices:
				add(wl, "bound pod "+slot+" devices", quote(sp.devices), quote(bp.devices)+" (gantry.dev/devices)")
			}
		}
	}
	return out
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestParityDiffDecisions checks the comparison itself on a hand-written event log:
// the replay of the simulator's log (slots, ETAs, notices, evictions) and one message
// per difference naming the instant, workload, field and both values.
func TestParityDiffDecisions(t *testing.T) {
	lines := []string{
		`{"t":0,"event":"submitted","workload":"ns/a"}`,
		`{"t":0,"event":"submitted","workload":"ns/b"}`,
		`{"t":0,"event":"submitted","workload":"ns/c"}`,
		`{"t":0,"event":"admitted","workload":"ns/a","flavor":"h100"}`,
		`{"t":0,"event":"placed","workload":"ns/a","flavor":"h100","pods":[{"name":"a-main-0","node":"n1","devices":["GPU-1","GPU-0"]}]}`,
		`{"t":0,"event":"reserved","workload":"ns/b","pods":[{"name":"","node":"n2"},{"name":"","node":"n1"}],"eta":7200.5}`,
		`{"t":0,"event":"rejected","workload":"ns/c","reason":"WaitingForQuota: needs 8"}`,
		`{"t":60,"event":"preempted","workload":"ns/a","by":"ns/c"}`,
		`{"t":180,"event":"evicted","workload":"ns/a"}`,
	}
	var log []simRecord
	for _, l := range lines {
		var r simRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		var err error
		if r.at, err = seconds(r.T); err != nil {
			t.Fatal(err)
		}
		log = append(log, r)
	}
	if got, want := instants(log, time.Minute), []time.Duration{0, time.Minute}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("instants = %v, want %v", got, want)
	}
	s0 := simDecisions(log, 0)
	want0 := map[string]wlView{"ns/a": {phase: phaseAdmitted}, "ns/b": {phase: phaseReserved, eta: 2 * time.Hour, nodes: "n1,n2"},
		"ns/c": {phase: phasePending, reason: "WaitingForQuota"}}
	if fmt.Sprint(s0.workloads) != fmt.Sprint(want0) {
		t.Errorf("t=0 replay = %v, want %v", s0.workloads, want0)
	}
	if p := s0.placed["ns/a"]; p.flavors != "h100" || p.pods["main-0"] != (podAt{node: "n1", devices: "GPU-0,GPU-1"}) {
		t.Errorf("t=0 placement of ns/a = %+v", p)
	}
	if v := simDecisions(log, time.Minute).workloads["ns/a"]; v != (wlView{phase: phaseNoticed, by: "ns/c"}) {
		t.Errorf("t=1m ns/a = %v, want under notice for ns/c", v)
	}
	if v := simDecisions(log, 3*time.Minute).workloads["ns/a"]; v.phase != phasePending {
		t.Errorf("t=3m ns/a = %v, want pending again after its eviction", v)
	}

	same := newDecisions(0)
	same.workloads, same.admitted, same.placed = want0, []string{"ns/a"}, s0.placed
	same.bound["ns/a"] = map[string]podAt{"main-0": {node: "n1", devices: "GPU-0,GPU-1"}}
	if d := diffDecisions(s0, same); len(d) != 0 {
		t.Errorf("equal decisions reported as different: %q", d)
	}

	ctl := newDecisions(0)
	ctl.workloads = map[string]wlView{"ns/a": {phase: phaseAdmitted}, "ns/b": {phase: phaseReserved, eta: time.Hour, nodes: "n1,n2"},
		"ns/c": {phase: phaseAbsent}}
	ctl.admitted = []string{"ns/a"}
	ctl.placed["ns/a"] = placement{flavors: "a100", pods: map[string]podAt{"main-0": {node: "n2", devices: "GPU-0,GPU-1"}}}
	ctl.bound["ns/a"] = map[string]podAt{"main-0": {node: "n1", devices: "GPU-3"}}
	want := []string{
		`t=0s ns/b: reservation ETA: simulator reserved (ETA 2h0m0s on n1,n2), controller reserved (ETA 1h0m0s on n1,n2)`,
		`t=0s ns/c: state: simulator pending (WaitingForQuota), controller no Workload for the job`,
		`t=0s ns/a: flavors: simulator "h100", controller "a100"`,
		`t=0s ns/a: pod main-0 node: simulator n1, controller n2`,
		`t=0s ns/a: bound pod main-0 devices: simulator "GPU-0,GPU-1", controller "GPU-3" (gantry.dev/devices)`,
	}
	if got := diffDecisions(s0, ctl); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ctl.admitted = nil
	if got := diffDecisions(s0, ctl); !strings.Contains(strings.Join(got, "\n"), "t=0s admissions at this instant, in order: simulator [ns/a], controller []") {
		t.Errorf("a missing admission is not reported: %q", got)
	}
}
