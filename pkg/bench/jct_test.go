package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
)

// tinyPhilly imports a hand-made Philly trace (rows after the header) on the given
// virtual clusters ("vc,nodes" rows), from 2017-10-01 on.
func tinyPhilly(t *testing.T, rows, vcs string) *api.Objects {
	t.Helper()
	jobs, err := trace.ReadPhillyJobs(strings.NewReader("timestamp,duration,num_gpus,gpu_time,cluster\n"+rows), "philly.csv")
	if err != nil {
		t.Fatal(err)
	}
	vc, err := trace.ReadPhillyVCs(strings.NewReader("vc,node num\n"+vcs), "vc.csv")
	if err != nil {
		t.Fatal(err)
	}
	imp, err := trace.ImportPhilly(jobs, vc, trace.PhillyOptions{From: time.Date(2017, 10, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return imp.Objects
}

// jobLog records each job's priority at submission and its first start and finish.
type jobLog struct {
	priority      map[string]int32
	start, finish map[string]time.Duration
}

func newJobLog() *jobLog {
	return &jobLog{priority: map[string]int32{}, start: map[string]time.Duration{}, finish: map[string]time.Duration{}}
}

func (l *jobLog) OnEvent(e sim.EventRecord) {
	switch e.Event {
	case sim.EvSubmitted:
		l.priority[e.Workload] = e.Priority
	case sim.EvPlaced:
		if _, ok := l.start[e.Workload]; !ok {
			l.start[e.Workload] = e.T.Duration()
		}
	case sim.EvFinished:
		l.finish[e.Workload] = e.T.Duration()
	}
}

func (l *jobLog) OnSample(sim.ClusterState) {}

// runTiny replays objs under policy and returns the result and the job log.
func runTiny(t *testing.T, objs *api.Objects, policy string, eta bool) (JCTResult, *jobLog) {
	t.Helper()
	log := newJobLog()
	r, err := RunJCTWith(objs, policy, JCTOptions{Seed: 42, ETA: eta, Observers: []sim.Observer{log}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Finished != r.Jobs {
		t.Fatalf("%s: %d of %d jobs finished", policy, r.Finished, r.Jobs)
	}
	return r, log
}

// Job IDs of the tiny traces: the line of the job in the file (the header is line 1).
func job(line int) string { return fmt.Sprintf("philly/job-%06d", line) }

// TestJCTPolicyOrder: one 8-GPU node, a running job L and two whole-node jobs queued
// behind it, the long one first. The oracles finish the short one first; fifo and
// gantry, knowing no run time, keep arrival order; gantry-lifo serves the newest.
func TestJCTPolicyOrder(t *testing.T) {
	// Lines: 2 L (0 s, 1000 s), 3 long (10 s, 500 s), 4 short (200 s, 100 s). Under
	// srtf the long job preempts L and starts at 130 s, and the short one preempts it.
	rows := "2017-10-01 00:00:00,1000.0,8,8000.0,a\n2017-10-01 00:00:10,500.0,8,4000.0,a\n2017-10-01 00:03:20,100.0,8,800.0,a\n"
	long, short := job(3), job(4)
	tests := []struct {
		policy     string
		shortFirst bool
	}{
		{JCTFIFO, false},
		{JCTGantry, false},
		{JCTSJF, true},
		{JCTSRTF, true},
		// Nothing has finished yet: the learned policies rank every job alike.
		{JCTQSSF, false},
		{JCTGantryEst, false},
		// The newest job (the short one, at 200 s) preempts L.
		{JCTGantryLIFO, true},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			_, log := runTiny(t, tinyPhilly(t, rows, "a,1\n"), tc.policy, false)
			if got := log.finish[short] < log.finish[long]; got != tc.shortFirst {
				t.Errorf("short job finishes at %v, long at %v: short first = %v, want %v", log.finish[short], log.finish[long], got, tc.shortFirst)
			}
		})
	}
}

// TestJCTSRTFPreempts: a short job preempts a running long one, which resumes from the
// checkpoint it wrote at the notice.
func TestJCTSRTFPreempts(t *testing.T) {
	rows := "2017-10-01 00:00:00,1000.0,8,8000.0,a\n2017-10-01 00:00:10,100.0,8,800.0,a\n"
	long, short := job(2), job(3)
	tests := []struct {
		policy            string
		preempted         int
		shortStart        time.Duration
		longFinish        time.Duration
		shortFinishBefore bool
	}{
		// Non-preemptive: the short job waits for the long one.
		{policy: JCTSJF, shortStart: 1000 * time.Second, longFinish: 1000 * time.Second},
		// The notice at 10 s gives the long job the two-minute grace; it saved its 10 s
		// at the notice and runs its last 990 s after the short job (130 s to 230 s).
		{policy: JCTSRTF, preempted: 1, shortStart: 130 * time.Second, longFinish: 1220 * time.Second, shortFinishBefore: true},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			r, log := runTiny(t, tinyPhilly(t, rows, "a,1\n"), tc.policy, false)
			if r.Preempted != tc.preempted || log.start[short] != tc.shortStart || log.finish[long] != tc.longFinish {
				t.Errorf("preempted %d, short starts %v, long finishes %v; want %d, %v, %v",
					r.Preempted, log.start[short], log.finish[long], tc.preempted, tc.shortStart, tc.longFinish)
			}
			if got := log.finish[short] < log.finish[long]; got != tc.shortFinishBefore {
				t.Errorf("short job finished before the long one: %v, want %v", got, tc.shortFinishBefore)
			}
		})
	}
}

// TestJCTOnlinePoliciesLearnOnlyFromFinishedJobs: two virtual clusters of one node.
// Node a runs a long job, node b a 7-GPU long job and a 1-GPU job H that ends at 100 s.
// P (submitted at 10 s, before H ends) can only get the default prediction; R arrives at
// 100 s, the instant H ends, which it must not see either; Q (200 s) is predicted from
// H. When node a frees, the learned policies start Q first although P and R are older;
// the policies that know no run time keep arrival order.
func TestJCTOnlinePoliciesLearnOnlyFromFinishedJobs(t *testing.T) {
	rows := strings.Join([]string{
		"2017-10-01 00:00:00,5000.0,8,40000.0,a", // line 2: node a until 5000 s
		"2017-10-01 00:00:00,9000.0,7,63000.0,b", // line 3: node b until 9000 s
		"2017-10-01 00:00:00,100.0,1,100.0,b",    // line 4: H, ends at 100 s
		"2017-10-01 00:00:10,10.0,8,80.0,a",      // line 5: P
		"2017-10-01 00:01:40,20.0,8,160.0,a",     // line 6: R, at 100 s
		"2017-10-01 00:03:20,30.0,8,240.0,a",     // line 7: Q, at 200 s
	}, "\n") + "\n"
	p, r, q := job(5), job(6), job(7)
	unknown := int64(8 * defaultRuntime / time.Second)
	tests := []struct {
		policy       string
		wantP, wantQ int32 // priorities at submission
		qBeforeP     bool
		online       bool
	}{
		{policy: JCTQSSF, wantP: int32(-unknown), wantQ: -8 * 100, qBeforeP: true, online: true},
		{policy: JCTGantryEst, wantP: bandRank(defaultRuntime, 8), wantQ: bandRank(100*time.Second, 8), qBeforeP: true, online: true},
		{policy: JCTGantry, qBeforeP: false},
		{policy: JCTSJF, wantP: -10, wantQ: -30, qBeforeP: false},
	}
	for _, tc := range tests {
		t.Run(tc.policy, func(t *testing.T) {
			_, log := runTiny(t, tinyPhilly(t, rows, "a,1\nb,1\n"), tc.policy, false)
			if log.priority[p] != tc.wantP || log.priority[q] != tc.wantQ {
				t.Errorf("priorities P %d Q %d, want %d and %d", log.priority[p], log.priority[q], tc.wantP, tc.wantQ)
			}
			if tc.online && log.priority[r] != log.priority[p] {
				t.Errorf("R (arriving as H ends) has priority %d, P (before H ends) %d: R must not see H", log.priority[r], log.priority[p])
			}
			if got := log.start[q] < log.start[p]; got != tc.qBeforeP {
				t.Errorf("Q starts at %v, P at %v: Q first = %v, want %v", log.start[q], log.start[p], got, tc.qBeforeP)
			}
		})
	}
}

// TestJCTWaitAndJCTPercentiles: five 100 s whole-node jobs submitted together on one
// node run one after the other: waits 0..400 s, JCTs 100..500 s.
func TestJCTWaitAndJCTPercentiles(t *testing.T) {
	rows := strings.Repeat("2017-10-01 00:00:00,100.0,8,800.0,a\n", 5)
	res, _ := runTiny(t, tinyPhilly(t, rows, "a,1\n"), JCTFIFO, false)
	s := func(n int) sim.Seconds { return sim.Seconds(time.Duration(n) * time.Second) }
	// Nearest rank: p50 is the 3rd of 5 values, p95 and p99 the 5th.
	if w := res.Wait; w.Count != 5 || w.Mean != s(200) || w.P50 != s(200) || w.P95 != s(400) || w.P99 != s(400) {
		t.Errorf("wait %+v: want 5 samples, mean 200 s, p50 200 s, p95 and p99 400 s", w)
	}
	if j := res.JCT; j.Count != 5 || j.Mean != s(300) || j.P50 != s(300) || j.P95 != s(500) || j.P99 != s(500) {
		t.Errorf("JCT %+v: want 5 samples, mean 300 s, p50 300 s, p95 and p99 500 s", j)
	}
}

// TestJCTETA: H teaches the predictor that a's whole-node jobs run 100 s; A then runs
// 1000 s and B queues behind it at 300 s. The declared ETAs (A's trace duration) are
// exact; the learned ones expect A, having outlived every run of its kind, to run as
// long again (100 s more) and are 800 s early.
func TestJCTETA(t *testing.T) {
	rows := "2017-10-01 00:00:00,100.0,8,800.0,a\n2017-10-01 00:03:20,1000.0,8,8000.0,a\n2017-10-01 00:05:00,10.0,8,80.0,a\n"
	res, _ := runTiny(t, tinyPhilly(t, rows, "a,1\n"), JCTFIFO, true)
	if len(res.ETA) != 4 {
		t.Fatalf("ETA accuracy for %d kinds, want 4", len(res.ETA))
	}
	tests := []struct {
		eta       ETAAccuracy
		runtimes  string
		absErr    time.Duration
		sharePerm int64
	}{
		{eta: res.ETA[0], runtimes: ETADeclared, absErr: 0, sharePerm: 1000},
		{eta: res.ETA[1], runtimes: ETALearned, absErr: 800 * time.Second, sharePerm: 1000},
		{eta: res.ETA[2], runtimes: ETADeclaredQueue, absErr: 0, sharePerm: 1000},
		{eta: res.ETA[3], runtimes: ETALearnedQueue, absErr: 800 * time.Second, sharePerm: 1000},
	}
	for _, tc := range tests {
		e := tc.eta
		if e.Runtimes != tc.runtimes || e.Queued != 1 || e.Started != 1 || e.SharePermille != tc.sharePerm ||
			e.AbsError.P50.Duration() != tc.absErr || e.P90.Duration() != tc.absErr || e.EarlyPermille != 0 {
			t.Errorf("%+v: want %s, 1 queued job with an ETA off by %v, not early", e, tc.runtimes, tc.absErr)
		}
	}
}

// TestJCTETANoHistory: with nothing finished, the learned ETA has no end to count on.
func TestJCTETANoHistory(t *testing.T) {
	rows := "2017-10-01 00:00:00,1000.0,8,8000.0,a\n2017-10-01 00:00:10,100.0,8,800.0,a\n"
	res, _ := runTiny(t, tinyPhilly(t, rows, "a,1\n"), JCTGantry, true)
	for _, e := range res.ETA {
		want := 0
		if e.Runtimes == ETADeclared || e.Runtimes == ETADeclaredQueue {
			want = 1
		}
		if e.Started != 1 || e.WithETA != want {
			t.Errorf("%+v: want %d of 1 queued job with an ETA", e, want)
		}
	}
}

func TestJCTUnknownPolicy(t *testing.T) {
	_, err := RunJCTWith(tinyPhilly(t, "2017-10-01 00:00:00,1.0,1,1.0,a\n", "a,1\n"), "lottery", JCTOptions{})
	if err == nil || !strings.Contains(err.Error(), `unknown policy "lottery"`) {
		t.Fatalf("error = %v, want unknown policy", err)
	}
}
