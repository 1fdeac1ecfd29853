package api

import (
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// victims of a preemptor of priority 5 created at t0, by how they compare.
var victims = []struct {
	name string
	v    PriorityAge
}{
	{"lower-newer", PriorityAge{4, t0.Add(time.Second)}},
	{"lower-older", PriorityAge{4, t0.Add(-time.Second)}},
	{"equal-newer", PriorityAge{5, t0.Add(time.Second)}},
	{"equal-older", PriorityAge{5, t0.Add(-time.Second)}},
	{"equal-same-time", PriorityAge{5, t0}},
	{"higher-newer", PriorityAge{6, t0.Add(time.Second)}},
}

// TestPreemptionPolicyAllows: each policy's verdict on every kind of victim, in the
// order of victims above.
func TestPreemptionPolicyAllows(t *testing.T) {
	pre := PriorityAge{5, t0}
	cases := []struct {
		policy PreemptionPolicy
		want   [6]bool
	}{
		{PreemptLowerPriority, [6]bool{true, true, false, false, false, false}},
		{PreemptLowerOrNewerEqualPriority, [6]bool{true, true, true, false, false, false}},
		{PreemptAny, [6]bool{true, true, true, true, true, true}},
		{PreemptNever, [6]bool{}},
		{"", [6]bool{}}, // the empty value is Never, as in Kueue
		{"Sometimes", [6]bool{}},
	}
	for _, tc := range cases {
		for i, v := range victims {
			if got := tc.policy.Allows(pre, v.v); got != tc.want[i] {
				t.Errorf("%q.Allows(preemptor, %s) = %v, want %v", tc.policy, v.name, got, tc.want[i])
			}
		}
		if got, want := tc.policy.Enabled(), tc.want != [6]bool{}; got != want {
			t.Errorf("%q.Enabled() = %v, want %v", tc.policy, got, want)
		}
	}
}

// TestBorrowWithinCohortAllows: LowerPriority up to the threshold, inclusive.
func TestBorrowWithinCohortAllows(t *testing.T) {
	pre := PriorityAge{5, t0}
	three, four := int32(3), int32(4)
	cases := []struct {
		name   string
		b      BorrowWithinCohort
		victim PriorityAge
		want   bool
	}{
		{"lower, no threshold", BorrowWithinCohort{Policy: PreemptLowerPriority}, PriorityAge{4, t0}, true},
		{"at the threshold", BorrowWithinCohort{Policy: PreemptLowerPriority, MaxPriorityThreshold: &four}, PriorityAge{4, t0}, true},
		{"above the threshold", BorrowWithinCohort{Policy: PreemptLowerPriority, MaxPriorityThreshold: &three}, PriorityAge{4, t0}, false},
		{"equal priority", BorrowWithinCohort{Policy: PreemptLowerPriority}, PriorityAge{5, t0.Add(time.Second)}, false},
		{"never", BorrowWithinCohort{Policy: PreemptNever}, PriorityAge{0, t0}, false},
		{"empty policy", BorrowWithinCohort{}, PriorityAge{0, t0}, false},
	}
	for _, tc := range cases {
		if got := tc.b.Allows(pre, tc.victim); got != tc.want {
			t.Errorf("%s: Allows = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWorkloadPriorityAge(t *testing.T) {
	w := &Workload{Meta: Meta{Created: t0}, Priority: 7}
	if got := w.PriorityAge(); got != (PriorityAge{7, t0}) {
		t.Fatalf("PriorityAge = %+v", got)
	}
}
