package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"text/tabwriter"

	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// Two measures of one curve point, both in percent:
//   - unallocated of arrived, (arrived − allocated) ÷ arrived: how much of the demand
//     that arrived so far was refused (Gantry's headline number);
//   - unallocated of capacity, 100 − allocated ÷ cluster GPUs: the FGD paper's
//     "unallocated GPUs" (its Fig. 7 and 9 curves and bar charts).
// At 100% arrival they nearly coincide; past it the first grows with every refused pod
// while the second only reads how full the cluster got. Each is an exact fraction of two
// integers of milli-GPU; means over seeds are summed exactly and rounded once, for
// printing (pctOfArrived, pctOfCapacity, FragStat).

// pctOfArrived is 100·(arrived − allocated)/arrived as an exact fraction (0 with nothing
// arrived).
func pctOfArrived(p FragPoint) *big.Rat {
	if p.Arrived <= 0 {
		return new(big.Rat)
	}
	return big.NewRat(100*int64(p.Arrived-p.Allocated), int64(p.Arrived))
}

// pctOfCapacity is 100 − 100·allocated/capacity as an exact fraction.
func pctOfCapacity(p FragPoint, capacity int64) *big.Rat {
	if capacity <= 0 {
		return new(big.Rat)
	}
	return big.NewRat(100*(capacity-int64(p.Allocated)), capacity)
}

// FragStat is a mean and a population standard deviation over seeds, in percent. The
// mean is exact before it is rounded to a float64 for the report; the deviation, a
// square root, is computed in float64.
type FragStat struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
}

// statOf averages exact values.
func statOf(xs []*big.Rat) FragStat {
	if len(xs) == 0 {
		return FragStat{}
	}
	sum := new(big.Rat)
	for _, x := range xs {
		sum.Add(sum, x)
	}
	mean := new(big.Rat).Quo(sum, big.NewRat(int64(len(xs)), 1))
	var sq float64
	for _, x := range xs {
		d, _ := new(big.Rat).Sub(x, mean).Float64()
		sq += d * d
	}
	m, _ := mean.Float64()
	return FragStat{Mean: m, Std: math.Sqrt(sq / float64(len(xs)))}
}

// String renders "12.34 ± 0.05".
func (s FragStat) String() string { return fmt.Sprintf("%.2f ± %.2f", s.Mean, s.Std) }

// FragLevel is one arrival level's two measures over seeds.
type FragLevel struct {
	ArrivedPermille int64    `json:"arrivedPermille"`
	OfArrived       FragStat `json:"unallocatedOfArrived"`
	OfCapacity      FragStat `json:"unallocatedOfCapacity"`
}

// FragSummary is one policy's result over seeds at 100% arrival and at the end.
type FragSummary struct {
	Policy string    `json:"policy"`
	Seeds  int       `json:"seeds"`
	At100  FragLevel `json:"at100"`
	AtEnd  FragLevel `json:"atEnd"`
}

// levelOf reads one arrival level of every run.
func levelOf(runs []FragRun, permille int64) FragLevel {
	var ofArrived, ofCapacity []*big.Rat
	for _, r := range runs {
		p := r.At(permille)
		ofArrived = append(ofArrived, pctOfArrived(p))
		ofCapacity = append(ofCapacity, pctOfCapacity(p, int64(r.Capacity)))
	}
	return FragLevel{ArrivedPermille: permille, OfArrived: statOf(ofArrived), OfCapacity: statOf(ofCapacity)}
}

// SummariseFrag groups runs by policy (in first-seen order) and reads both measures at
// 100% arrival and at endPermille.
func SummariseFrag(runs []FragRun, endPermille int64) []FragSummary {
	var order []string
	byPolicy := map[string][]FragRun{}
	for _, r := range runs {
		if _, ok := byPolicy[r.Policy]; !ok {
			order = append(order, r.Policy)
		}
		byPolicy[r.Policy] = append(byPolicy[r.Policy], r)
	}
	out := make([]FragSummary, 0, len(order))
	for _, name := range order {
		rs := byPolicy[name]
		out = append(out, FragSummary{Policy: name, Seeds: len(rs), At100: levelOf(rs, 1000), AtEnd: levelOf(rs, endPermille)})
	}
	return out
}

// WriteFragText prints one row per policy: both measures at 100% and at the end.
func WriteFragText(w io.Writer, sums []FragSummary) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	end := "END"
	if len(sums) > 0 {
		end = report.FormatPermille(sums[0].AtEnd.ArrivedPermille)
	}
	fmt.Fprintf(tw, "POLICY\tSEEDS\tOF ARRIVED @100%%\tOF CAPACITY @100%%\tOF ARRIVED @%s\tOF CAPACITY @%s\n", end, end)
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", s.Policy, s.Seeds, s.At100.OfArrived, s.At100.OfCapacity, s.AtEnd.OfArrived, s.AtEnd.OfCapacity)
	}
	return tw.Flush()
}

// WriteFragCSV writes every run's curve: variant, policy, seed, arrived share of capacity (%),
// arrived and allocated GPUs, and both measures (%, two decimals, rounded from the exact
// fractions).
func WriteFragCSV(w io.Writer, runs []FragRun) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"variant", "policy", "seed", "arrived_pct", "arrived_gpus", "allocated_gpus", "unallocated_of_arrived_pct", "unallocated_of_capacity_pct"}); err != nil {
		return err
	}
	for _, r := range runs {
		for _, p := range r.Curve {
			rec := []string{r.Variant, r.Policy, strconv.FormatInt(r.Seed, 10), tenths(p.ArrivedPermille),
				report.FormatMilli(p.Arrived), report.FormatMilli(p.Allocated),
				pctOfArrived(p).FloatString(2), pctOfCapacity(p, int64(r.Capacity)).FloatString(2)}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// tenths renders permille as a percentage number with one decimal ("97.5").
func tenths(p int64) string { return fmt.Sprintf("%d.%d", p/10, p%10) }
