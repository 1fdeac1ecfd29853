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

// invariantSteps is how many random steps (events handled + scheduling cycles +
// controller restarts) TestInvariantsProperty runs at least; -short runs a fifth.
// `make fuzz` asks for more.
var invariantSteps = flag.Int("invariants.steps", 100_000, "TestInvariantsProperty: random steps (events handled + cycles + restarts) to run at least (-short: a fifth)")

// invTotals adds up what the checked runs did.
type invTotals struct {
	worlds, steps, events, cycles, restarts, samples int
	restored                                         restoreCounts
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
//  5. determinism: the same world and seed give byte-identical event logs;
//  6. the scheduler's plans agree with the model: every rejection and reservation is
//     for a pending workload, and the model commits every admission planned (none is
//     for a workload already running, none binds a device in use);
//  7. controller restarts (invariants_restart_test.go) lose nothing: the rebuilt
//     scheduler knows exactly the unfinished workloads, holds what the controller's
//     records restore (the replaced scheduler's waits and reservations, the history),
//     decides on every pending workload in its first pass and on no running one;
//     invariants 1-6 hold after it as before;
//  8. a restart changes no decision: the log with restarts is the log of the same
//     world with a plain pass (cycles at that instant) at each restart instead, but
//     for the rejection records (decisionLines); checked in one world with restarts in
//     three, both runs handing every pending workload to every cycle (RetryAll). A
//     restarted scheduler parks nothing, so with parking the comparison would test
//     that parking changes no decision too, which does not hold yet (a parked
//     workload whose flavor choice more usage elsewhere would change is not woken).
//
// Worlds come from drawInvariantWorld (invariants_world_test.go), the checks from
// invariantChecker (invariants_check_test.go). The test runs rapid.Check rounds until
// -invariants.steps steps of checked runs were taken (each world's other, unchecked
// runs are not counted), and fails if it took fewer; one round only when -rapid.seed
// or RAPID_SEED fixes the cases, since more would repeat them.
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
	rs := tot.restored
	t.Logf("checked %d worlds: %d steps (%d events handled + %d cycles + %d restarts), %d samples, in %s (target %d steps); "+
		"restarts restored %d running and %d pending workloads, %d notices in flight, %d waits, %d reservations (%d dropped: node or device gone), %d history records",
		tot.worlds, tot.steps, tot.events, tot.cycles, tot.restarts, tot.samples, time.Since(start).Round(time.Millisecond), target,
		rs.running, rs.pending, rs.leaving, rs.waits, rs.reservations, rs.dropped, rs.history)
	switch {
	case t.Failed() || tot.steps >= target:
	case rapidSeedFixed():
		t.Logf("fixed cases (-rapid.seed or RAPID_SEED): %d steps, fewer than the %d asked for", tot.steps, target)
	default:
		t.Errorf("ran %d steps, fewer than the %d asked for (-invariants.steps)", tot.steps, target)
	}
}

func (tot *invTotals) add(r invRun) {
	tot.worlds++
	tot.events += r.events
	tot.cycles += r.cycles
	tot.restarts += r.restarts
	tot.steps += r.events + r.cycles + r.restarts
	tot.samples += r.samples
	tot.restored.add(r.restored)
}

// rapidSeedFixed reports whether rapid runs fixed cases (-rapid.seed or RAPID_SEED).
func rapidSeedFixed() bool {
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() != "0" {
		return true
	}
	return os.Getenv("RAPID_SEED") != "" && os.Getenv("RAPID_SEED") != "0"
}

// invRun is what one checked run did.
type invRun struct {
	events, cycles, restarts, samples int
	restored                          restoreCounts
}

// restoreCounts say what restarts restored, to show the restore paths are exercised.
type restoreCounts struct {
	running, pending, leaving, waits, reservations, dropped, history int
}

func (c *restoreCounts) add(o restoreCounts) {
	c.running += o.running
	c.pending += o.pending
	c.leaving += o.leaving
	c.waits += o.waits
	c.reservations += o.reservations
	c.dropped += o.dropped
	c.history += o.history
}

// checkInvariantsOnce draws a world, simulates it with every invariant checked and,
// on other goroutines (the runs share nothing but the read-only objects), simulates it
// again without the checker, whose event log must be byte-identical, and, where the
// world says to compare its restarts, twice more without parking: with its restarts,
// and with a plain pass in place of each restart; those two logs must hold the same
// decisions (decisionLines).
func checkInvariantsOnce(rt *rapid.T) invRun {
	w := drawInvariantWorld(rt)
	twin := make(chan simResult, 1)
	go func() {
		r, err := simulateWorld(w, nil, restartController)
		twin <- simResult{r, err}
	}()
	var unparked chan [2]simResult
	if w.compare {
		unparked = make(chan [2]simResult, 1)
		go func() {
			wr := w
			wr.policy.RetryAll = true
			var out [2]simResult
			for i, mode := range []restartMode{restartController, passInstead} {
				r, err := simulateWorld(wr, nil, mode)
				out[i] = simResult{r, err}
			}
			unparked <- out
		}()
	}
	chk := newInvariantChecker()
	r, err := simulateWorld(w, chk, restartController)
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
	if line, a, b := firstDifference(jsonLines(rt, r.s.Log()), jsonLines(rt, again.r.s.Log())); line >= 0 {
		rt.Fatalf("same world and seed, different event logs from line %d:\nfirst:  %s\nsecond: %s", line+1, a, b)
	}
	if unparked != nil {
		runs := <-unparked
		for _, u := range runs {
			if u.err != nil {
				rt.Fatalf("simulation without parking failed: %v", u.err)
			}
		}
		if line, a, b := firstDifference(decisionLines(rt, runs[0].r.s.Log()), decisionLines(rt, runs[1].r.s.Log())); line >= 0 {
			rt.Fatalf("restarts changed a decision in a world of %s (policy %+v, run with RetryAll), from decision record %d:\nwith restarts: %s\nwith passes:   %s",
				describeWorld(w), w.policy, line+1, a, b)
		}
	}
	return r.steps(chk)
}

type simResult struct {
	r   *invSim
	err error
}

// simulateWorld simulates w to its horizon, restarting the controller as w says (or
// running a pass instead), with chk watching when given: then every restart is checked
// too (checkRestored, then checkAfterRestart once the new scheduler's first pass ran).
func simulateWorld(w invWorld, chk *invariantChecker, mode restartMode) (*invSim, error) {
	r := &invSim{rec: newRestartRecords(), chk: chk, mode: mode}
	opts := Options{KeepLog: true, Until: w.until, Policy: w.policy, Observers: []Observer{r.rec.observer()}}
	if chk != nil {
		opts.Observers = append(opts.Observers, chk.observer())
	}
	s, err := New(w.objs, opts)
	if err != nil {
		return nil, fmt.Errorf("simulator refused the world: %w", err)
	}
	r.s, r.rec.s = s, s
	if chk != nil {
		chk.s = s
	}
	return r, r.run(w)
}

// steps counts a finished run's steps: the events taken off the queue, the cycles its
// schedulers ran (cycles with nothing to decide are not counted) and the restarts.
func (r *invSim) steps(chk *invariantChecker) invRun {
	cycles, _ := r.s.sched.Stats()
	return invRun{events: int(r.s.queue.seq) - r.s.queue.Len(), cycles: int(r.cycles + cycles), restarts: r.restarts,
		samples: chk.samples, restored: r.restored}
}

// decisionLines are the JSON lines of a log's records but the rejections: a rebuilt
// scheduler explains again what it rejects (it logs a rejection when its reason
// changes, and remembers none), so rejection records differ across a restart where no
// decision does.
func decisionLines(rt *rapid.T, recs []EventRecord) [][]byte {
	keep := make([]EventRecord, 0, len(recs))
	for _, r := range recs {
		if r.Event != EvRejected {
			keep = append(keep, r)
		}
	}
	return jsonLines(rt, keep)
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
	return fmt.Sprintf("%d nodes, %d ClusterQueues, %d jobs, %d events, restarts %s", nodes, len(w.objs.ClusterQueues), len(w.objs.Workloads), len(w.objs.Events), restartsText(w.restarts))
}
