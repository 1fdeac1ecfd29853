package admission

import (
	"fmt"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// headRankQuota is a quota over flavors "a" and "b" of gpu from cohorts and queues.
func headRankQuota(t *testing.T, fair bool, cohorts []api.Cohort, cqs ...api.ClusterQueue) *Quota {
	t.Helper()
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("a").Obj(), gt.MakeFlavor("b").Obj()).Cohorts(cohorts...).ClusterQueues(cqs...).Obj()
	q, err := NewQuota(objs, Options{FairSharing: FairSharingConfig{Enabled: fair}})
	if err != nil {
		t.Fatalf("NewQuota: %v", err)
	}
	return q
}

// gpuQueue is ClusterQueue name of cohort (none: "") with nominal gpu quota per flavor,
// pairs of flavor and quantity.
func gpuQueue(name, cohort string, flavorQuota ...string) *gt.ClusterQueueWrapper {
	var fqs []api.FlavorQuotas
	for i := 0; i+1 < len(flavorQuota); i += 2 {
		fqs = append(fqs, gt.MakeFlavorQuotas(flavorQuota[i]).Resource(gpu, flavorQuota[i+1]).Obj())
	}
	return gt.MakeClusterQueue(name).Cohort(cohort).ResourceGroup(fqs...)
}

// gpuCohort is a cohort under parent (none: "") with gpu quota in flavor a.
func gpuCohort(name, parent, quota string) api.Cohort {
	return gt.MakeCohort(name).Parent(parent).ResourceGroup(gt.MakeFlavorQuotas("a").Resource(gpu, quota).Obj()).Obj()
}

// record admits usage of flavor f in cq as a running workload, without Admit's check.
func record(t *testing.T, q *Quota, name, cq, f string, amount int64) {
	t.Helper()
	n, ok := q.s.cqID(cq)
	if !ok {
		t.Fatalf("no clusterqueue %s", cq)
	}
	w := gt.MakeWorkload("ns", name).Obj()
	fa := []FlavorAmount{{FlavorResource: FlavorResource{f, gpu}, Amount: resources.Amount(amount)}}
	cells, err := q.s.cells(fa)
	if err != nil {
		t.Fatal(err)
	}
	q.seq++
	q.record(&AdmittedWorkload{ID: w.ID(), ClusterQueue: cq, Priority: w.Priority, Created: w.Created, Seq: q.seq, Usage: fa, cq: n, cells: cells})
}

// Without fair sharing a head's rank is its assignment's borrowing level (Kueue's
// Assignment.Borrows()): 0 in its queue's own quota, else the height of the lowest cohort
// whose subtree holds it, and for a cell that needs preemption the level once the
// victims are gone. QuickHeadRank gives the same without an assignment.
func TestHeadRankBorrowingLevel(t *testing.T) {
	// root (height 3) > mid (2, quota 4) > low (1, quota 2) > own (2), deep (0); top (0)
	// is right under the root.
	cohorts := []api.Cohort{gt.MakeCohort("root").Obj(), gpuCohort("mid", "root", "4"), gpuCohort("low", "mid", "2")}
	cases := []struct {
		name    string
		cq      string
		running int64 // gpu already used in cq
		ask     string
		want    int
	}{
		{name: "in its own nominal quota", cq: "own", ask: "2", want: 0},
		{name: "past its nominal, from its cohort's subtree", cq: "own", running: 1, ask: "2", want: 1},
		{name: "from the cohort above its own", cq: "deep", ask: "5", want: 2},
		{name: "from the root", cq: "top", ask: "3", want: 3},
		{name: "no cohort", cq: "alone", ask: "2", want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := headRankQuota(t, false, cohorts, gpuQueue("own", "low", "a", "2").Obj(), gpuQueue("deep", "low", "a", "0").Obj(),
				gpuQueue("top", "root", "a", "0").Obj(), gpuQueue("alone", "", "a", "2").Obj())
			if tc.running > 0 {
				record(t, q, "running", tc.cq, "a", tc.running)
			}
			w := gt.MakeWorkload("ns", "head").Request(gpu, tc.ask).Obj()
			a := q.Assign(w, tc.cq)
			if !a.Fits() {
				t.Fatalf("Assign: %s (%s)", a.Mode, a.Message)
			}
			if got := q.HeadRank(w, a); got.Level != tc.want || len(got.Standings) != 0 {
				t.Fatalf("HeadRank = %+v, want level %d", got, tc.want)
			}
			if got, ok := q.QuickHeadRank(w, tc.cq); !ok || got.Level != tc.want {
				t.Fatalf("QuickHeadRank = %+v, %v; want level %d", got, ok, tc.want)
			}
		})
	}
}

// A cell that needs preemption is rated at the level it has once the victims the
// preemption search finds for it alone are gone (Kueue's preemption oracle): reclaiming
// a borrower's use of the queue's own quota gives level 0.
func TestHeadRankLevelAfterPreemption(t *testing.T) {
	q := headRankQuota(t, false, []api.Cohort{gt.MakeCohort("root").Obj()},
		gpuQueue("owner", "root", "a", "4").Preemption(api.PreemptNever, api.PreemptAny).Obj(), gpuQueue("borrower", "root", "a", "0").Obj())
	record(t, q, "borrowed", "borrower", "a", 4)
	w := gt.MakeWorkload("ns", "head").Request(gpu, "4").Obj()
	a := q.Assign(w, "owner")
	if a.Mode != Preempt {
		t.Fatalf("Assign: %s, want Preempt", a.Mode)
	}
	if got := q.HeadRank(w, a); got.Level != 0 {
		t.Fatalf("level %d, want 0 (its own nominal quota once the borrower is reclaimed)", got.Level)
	}
	if _, ok := q.QuickHeadRank(w, "owner"); ok {
		t.Fatalf("QuickHeadRank answered for a short cell in a queue that may preempt")
	}
}

// Under fair sharing a head's rank is its standing at each cohort from the root down:
// whether the node below the cohort then borrows on a flavor the workload uses, then
// that node's share with the workload admitted.
func TestHeadRankStandings(t *testing.T) {
	cohorts := []api.Cohort{gt.MakeCohort("root").Obj(), gt.MakeCohort("left").Parent("root").ResourceGroup(
		gt.MakeFlavorQuotas("a").Resource(gpu, "10").Obj(), gt.MakeFlavorQuotas("b").Resource(gpu, "0").Obj()).Obj(),
		gt.MakeCohort("right").Parent("root").ResourceGroup(gt.MakeFlavorQuotas("b").Resource(gpu, "10").Obj()).Obj()}
	q := headRankQuota(t, true, cohorts, gpuQueue("l", "left", "a", "0", "b", "0").Obj(), gpuQueue("r", "right", "a", "5", "b", "0").Obj())
	record(t, q, "l-on-b", "l", "b", 5) // left borrows b from the root
	record(t, q, "r-on-a", "r", "a", 8) // right borrows a from the root
	rank := func(cq string, ask string) HeadRank {
		w := gt.MakeWorkload("ns", "head-"+cq).Request(gpu, ask).Obj()
		a := q.Assign(w, cq)
		if !a.Fits() || a.PodSets[0].Resources[0].Flavor != "a" {
			t.Fatalf("Assign in %s: %s", cq, a)
		}
		r := q.HeadRank(w, a)
		if quick, ok := q.QuickHeadRank(w, cq); ok {
			t.Fatalf("QuickHeadRank answered with two flavors: %+v", quick)
		}
		return r
	}
	l, r := rank("l", "4"), rank("r", "4")
	if len(l.Standings) != 2 || len(r.Standings) != 2 {
		t.Fatalf("standings %+v and %+v, want one per cohort on the path (root, then the queue's)", l, r)
	}
	// At the root, left (borrowing b only) does not borrow on a; right would.
	if l.Standings[0].Borrows || !r.Standings[0].Borrows {
		t.Fatalf("root standings %+v and %+v: want left not borrowing on a, right borrowing", l.Standings[0], r.Standings[0])
	}
	if CompareHeadRanks(l, r) >= 0 || CompareHeadRanks(r, l) <= 0 || CompareHeadRanks(l, l) != 0 {
		t.Fatalf("CompareHeadRanks: want left's head first")
	}
}

// Shares compare as Kueue's CompareDRS, exactly: a lower weighted share first (even
// where shares in thousandths would tie), a borrowing weight-0 node after every node
// with a weight, two of them by their unweighted shares.
func TestCompareDRS(t *testing.T) {
	heavy := int64(123456789000)
	cases := []struct {
		name string
		a, b DRS
		want int
	}{
		{name: "nothing borrowed first", a: DRS{}, b: DRS{borrowed: 1, lendable: 10, weight: 1000}, want: -1},
		{name: "lower share first", a: DRS{borrowed: 4, lendable: 8, weight: 1000}, b: DRS{borrowed: 5, lendable: 8, weight: 1000}, want: -1},
		{name: "weight divides", a: DRS{borrowed: 4, lendable: 8, weight: 1000}, b: DRS{borrowed: 6, lendable: 8, weight: 2000}, want: 1},
		{name: "high weights keep the difference", a: DRS{borrowed: 4, lendable: 8, weight: heavy}, b: DRS{borrowed: 8, lendable: 8, weight: heavy}, want: -1},
		{name: "equal fractions", a: DRS{borrowed: 2, lendable: 4, weight: 1000}, b: DRS{borrowed: 3, lendable: 6, weight: 1000}, want: 0},
		{name: "weight 0 after any weight", a: DRS{borrowed: 1, lendable: 100, weight: 0}, b: DRS{borrowed: 99, lendable: 100, weight: 1}, want: 1},
		{name: "two weight 0 by unweighted share", a: DRS{borrowed: 4, lendable: 8}, b: DRS{borrowed: 8, lendable: 8}, want: -1},
		{name: "weight 0 borrowing nothing is zero", a: DRS{}, b: DRS{borrowed: 1, lendable: 8, weight: 1000}, want: -1},
		{name: "amounts past 64-bit products", a: DRS{borrowed: 1 << 50, lendable: 1<<50 + 1, weight: heavy}, b: DRS{borrowed: 1 << 50, lendable: 1 << 50, weight: heavy}, want: -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := CompareDRS(tc.a, tc.b); got != tc.want {
				t.Fatalf("CompareDRS = %d, want %d", got, tc.want)
			}
			if got := CompareDRS(tc.b, tc.a); got != -tc.want {
				t.Fatalf("CompareDRS reversed = %d, want %d", got, -tc.want)
			}
		})
	}
}

// Property: wherever QuickHeadRank answers, its rank is HeadRank's of the assignment
// Assign gives (for a fitting or preempting one; a refused workload's rank is free),
// over random cohort trees and usages, with and without fair sharing.
func TestQuickHeadRankMatchesAssign(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := genWorld(rt)
		for i := rapid.IntRange(0, 8).Draw(rt, "running"); i > 0; i-- {
			w.submit(rt)
		}
		for i := 0; i < 5; i++ {
			cq := rapid.SampledFrom(w.cqs).Draw(rt, "cq")
			wl := gt.MakeWorkload("ns", fmt.Sprintf("head%d", i)).Priority(int32(rapid.IntRange(0, 3).Draw(rt, "priority"))).
				PodSet("one", int32(rapid.IntRange(1, 3).Draw(rt, "pods"))).Request(gpu, fmt.Sprint(rapid.IntRange(1, 5).Draw(rt, "size"))).Obj()
			quick, ok := w.m.QuickHeadRank(wl, cq)
			if !ok {
				continue
			}
			a := w.m.Assign(wl, cq)
			if a.Mode == NoFit {
				continue
			}
			if want := w.m.HeadRank(wl, a); CompareHeadRanks(quick, want) != 0 || quick.Level != want.Level {
				rt.Fatalf("%s in %s (%s): QuickHeadRank %+v, HeadRank %+v", wl.ID(), cq, a.Mode, quick, want)
			}
		}
	})
}
