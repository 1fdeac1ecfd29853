package admission

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// WhyKind says which sentence a Why renders.
type WhyKind uint8

const (
	// WhyText is a sentence made where the rating was (an unreadable request, a flavor
	// that does not admit the pod set, a flavor ruled out by the caller).
	WhyText WhyKind = iota
	// WhyNoQuota: the ClusterQueue lists no quota for the resource in the flavor.
	WhyNoQuota
	// WhyExceedsMax: more than the ClusterQueue can ever use, borrowing included.
	WhyExceedsMax
	// WhyFits: within the ClusterQueue's unused nominal quota.
	WhyFits
	// WhyBorrows: fits by borrowing Borrow from the cohort.
	WhyBorrows
	// WhyShort: not available now; NoBorrow says why the cohort cannot supply the rest.
	WhyShort
	// WhyNoPreemption: available only by preemption, which the ClusterQueue does not do.
	WhyNoPreemption
)

// NoBorrow is why a cohort cannot supply what a ClusterQueue lacks.
type NoBorrow uint8

const (
	NotInCohort NoBorrow = iota
	BorrowLimitReached
	CohortShort
)

// Why is one resource's part of a flavor's rating, kept as values: a cycle rates
// thousands of flavors and reads almost none of the sentences, so they are rendered
// (String) only where they are shown.
type Why struct {
	Kind     WhyKind
	Resource resources.Name
	Flavor   string
	// Amount is the request; Free the ClusterQueue's unused nominal quota; Nominal its
	// nominal quota; Limit the most it can use (WhyExceedsMax); Borrow what it borrows
	// (WhyBorrows), BorrowLimit its borrowing limit and Lendable what the cohort has
	// unused (WhyShort).
	Amount, Free, Nominal, Limit, Borrow, BorrowLimit, Lendable resources.Amount
	ClusterQueue, Cohort                                        string
	NoBorrow                                                    NoBorrow
	Text                                                        string
}

// textWhy is a ready-made sentence.
func textWhy(s string) Why { return Why{Kind: WhyText, Text: s} }

// String renders the sentence, e.g. "needs 8 nvidia.com/gpu in flavor h100, 4 free of
// nominal 128, cannot borrow: cohort global has 0 unused".
func (w Why) String() string {
	f := func(a resources.Amount) string { return resources.FormatReadable(w.Resource, a) }
	need := fmt.Sprintf("needs %s %s in flavor %s", f(w.Amount), w.Resource, w.Flavor)
	quota := fmt.Sprintf("%s free of nominal %s", f(w.Free), f(w.Nominal))
	switch w.Kind {
	case WhyNoQuota:
		return fmt.Sprintf("no quota for %s in flavor %s", w.Resource, w.Flavor)
	case WhyExceedsMax:
		return fmt.Sprintf("%s, more than clusterqueue %s can ever use (nominal %s, at most %s with borrowing)",
			need, w.ClusterQueue, f(w.Nominal), f(w.Limit))
	case WhyFits:
		return need + ", " + quota
	case WhyBorrows:
		return fmt.Sprintf("%s, %s, borrows %s from cohort %s", need, quota, f(w.Borrow), w.Cohort)
	case WhyShort:
		return need + ", " + quota + ", " + w.noBorrow(f)
	case WhyNoPreemption:
		return "preemption is not enabled for this clusterqueue"
	}
	return w.Text
}

func (w Why) noBorrow(f func(resources.Amount) string) string {
	switch w.NoBorrow {
	case NotInCohort:
		return "cannot borrow: not in a cohort"
	case BorrowLimitReached:
		return fmt.Sprintf("cannot borrow: borrowing limit %s reached", f(w.BorrowLimit))
	}
	return fmt.Sprintf("cannot borrow: cohort %s has %s unused", w.Cohort, f(w.Lendable))
}
