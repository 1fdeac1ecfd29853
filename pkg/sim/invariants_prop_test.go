package sim

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// invariantSteps is how many random steps (events handled + scheduling cycles)
// TestInvariantsProperty runs at least; -short runs a fifth. `make fuzz` asks for more.
var invariantSteps = flag.Int("invariants.steps", 100_000, "TestInvariantsProperty: random steps (events handled + cycles) to run at least (-short: a fifth)")

// invTotals adds up what the checked runs did.
type invTotals struct {
	worlds, steps, events, cycles, samples int
}

// Property: in random worlds under random event sequences, after every settled instant
// (and at every admission, for quota) the simulator's model keeps its invariants:
//  1. no GPU device (whole GPU or MIG memory slice) is held by two pods, and every pod
//     holds exactly the devices its requests ask for, on its node's current layout;
//  2. gangs are all or nothing: a running or noticed workload has its whole gang bound
//     (each pod set's count, or MinCount, or MinMember) exactly as its bindings say, no
//     other workload has a pod bound, and no pod lands on a node under spot notice;
//  3. quota is never exceeded: usage is the sum of the running workloads' assignments,
//     a ClusterQueue uses at most nominal (+ borrowing limit in a cohort), a cohort at
//     most what its members lend; where a quota change lowered the quota, admitted
//     workloads may stay above it but nothing new is admitted above it;
//  4. no workload is lost: every submitted, unfinished workload is pending, running or
//     noticed and live once; each finished once; the log's records agree with the model;
//  5. determinism: the same world and seed give byte-identical event logs.
//
// Worlds come from drawInvariantWorld (invariants_world_test.go), the checks from
// invariantChecker (invariants_check_test.go). The test runs rapid.Check rounds until
// -invariants.steps steps of checked runs were taken (each world's second, unchecked
// run for determinism is not counted); one round only when -rapid.seed or RAPID_SEED
// fixes the cases, since more would repeat them.
func TestInvariantsProperty(t *testing.T) {
	target := *invariantSteps
	if testing.Short() {
		target /= 5
	}
	// The runs allocate many short-lived plans and overlays: collecting less often saves
	// a tenth of the time for a few more megabytes.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var tot invTotals
	start := time.Now()
	for tot.steps < target && !t.Failed() {
		rapid.Check(t, func(rt *rapid.T) { tot.add(checkInvariantsOnce(rt)) })
		if rapidSeedFixed() {
			break
		}
	}
	t.Logf("checked %d worlds: %d steps (%d events handled + %d cycles), %d samples, in %s (target %d steps)",
		tot.worlds, tot.steps, tot.events, tot.cycles, tot.samples, time.Since(start).Round(time.Millisecond), target)
}

func (tot *invTotals) add(r invRun) {
	tot.worlds++
	tot.events += r.events
	tot.cycles += r.cycles
	tot.steps += r.events + r.cycles
	tot.samples += r.samples
}

// rapidSeedFixed reports whether rapid runs fixed cases (-rapid.seed or RAPID_SEED).
func rapidSeedFixed() bool {
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() != "0" {
		return true
	}
	return os.Getenv("RAPID_SEED") != "" && os.Getenv("RAPID_SEED") != "0"
}

// invRun is what one checked run did.
type invRun struct{ events, cycles, samples int }

// checkInvariantsOnce draws a world, simulates it with every invariant checked and,
// on another goroutine (the runs share nothing but the read-only objects), simulates it
// again without observers; the two event logs must be byte-identical.
func checkInvariantsOnce(rt *rapid.T) invRun {
	w := drawInvariantWorld(rt)
	twin := make(chan simResult, 1)
	go func() {
		s, err := simulateWorld(w, nil)
		twin <- simResult{s, err}
	}()
	chk := newInvariantChecker()
	s, err := simulateWorld(w, chk)
	again := <-twin
	if err != nil {
		rt.Fatalf("simulation failed: %v", err)
	}
	if chk.err != nil {
		rt.Fatalf("invariant violated in a world of %s (policy %+v): %v", describeWorld(w), w.policy, chk.err)
	}
	if chk.samples == 0 {
		rt.Fatalf("no sample was taken: nothing was checked")
	}
	if again.err != nil {
		rt.Fatalf("second simulation failed where the first did not: %v", again.err)
	}
	if line, a, b := firstDifference(jsonLines(rt, s.Log()), jsonLines(rt, again.s.Log())); line >= 0 {
		rt.Fatalf("same world and seed, different event logs from line %d:\nfirst:  %s\nsecond: %s", line+1, a, b)
	}
	return runSteps(s, chk)
}

type simResult struct {
	s   *Simulator
	err error
}

// simulateWorld simulates w to its horizon, with chk watching when given.
func simulateWorld(w invWorld, chk *invariantChecker) (*Simulator, error) {
	opts := Options{Until: w.until, Policy: w.policy}
	if chk != nil {
		opts.Observers = []Observer{chk.observer()}
	}
	s, err := New(w.objs, opts)
	if err != nil {
		return nil, fmt.Errorf("simulator refused the world: %w", err)
	}
	if chk != nil {
		chk.s = s
	}
	return s, s.Run()
}

// runSteps counts a finished run's steps: the events taken off the queue and the cycles
// the scheduler ran (cycles with nothing to decide are not counted).
func runSteps(s *Simulator, chk *invariantChecker) invRun {
	cycles, _ := s.sched.Stats()
	return invRun{events: int(s.queue.seq) - s.queue.Len(), cycles: int(cycles), samples: chk.samples}
}

// jsonLines renders records as JSON lines, the format of `gantry simulate --events`.
func jsonLines(rt *rapid.T, recs []EventRecord) [][]byte {
	out := make([][]byte, 0, len(recs))
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			rt.Fatalf("encoding %+v: %v", r, err)
		}
		out = append(out, b)
	}
	return out
}

// firstDifference is the first line where two logs differ (-1 when they are equal),
// with both lines ("<end>" past a log's end).
func firstDifference(a, b [][]byte) (int, string, string) {
	line := func(l [][]byte, i int) string {
		if i < len(l) {
			return string(l[i])
		}
		return "<end>"
	}
	for i := 0; i < max(len(a), len(b)); i++ {
		if i >= len(a) || i >= len(b) || !bytes.Equal(a[i], b[i]) {
			return i, line(a, i), line(b, i)
		}
	}
	return -1, "", ""
}

// describeWorld is a one-line summary of a world's size, for failure messages.
func describeWorld(w invWorld) string {
	nodes := 0
	for _, p := range w.objs.NodePools {
		nodes += p.Count
	}
	return fmt.Sprintf("%d nodes, %d ClusterQueues, %d jobs, %d events", nodes, len(w.objs.ClusterQueues), len(w.objs.Workloads), len(w.objs.Events))
}
