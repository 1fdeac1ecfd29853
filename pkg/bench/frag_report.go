package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// FragSummary is one policy's result over seeds: the share of arrived GPU demand left
// unallocated at 100% and 130% arrival, in percent. These are report statistics over
// finished integer runs, so floats are fine here (the runs themselves are exact).
type FragSummary struct {
	Policy    string  `json:"policy"`
	Seeds     int     `json:"seeds"`
	At100Mean float64 `json:"unallocatedAt100Mean"`
	At100Std  float64 `json:"unallocatedAt100Std"`
	AtEndMean float64 `json:"unallocatedAtEndMean"`
	AtEndStd  float64 `json:"unallocatedAtEndStd"`
	// EndPermille is the arrival level of the end column (1300 for 130%).
	EndPermille int64 `json:"endPermille"`
}

// SummariseFrag groups runs by policy (in first-seen order) and computes mean and
// population standard deviation over seeds.
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
		var at100, atEnd []float64
		for _, r := range rs {
			at100 = append(at100, float64(r.At(1000).UnallocatedPermille)/10)
			atEnd = append(atEnd, float64(r.At(endPermille).UnallocatedPermille)/10)
		}
		s := FragSummary{Policy: name, Seeds: len(rs), EndPermille: endPermille}
		s.At100Mean, s.At100Std = meanStd(at100)
		s.AtEndMean, s.AtEndStd = meanStd(atEnd)
		out = append(out, s)
	}
	return out
}

func meanStd(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var sq float64
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sq / float64(len(xs)))
}

// WriteFragText prints one row per policy.
func WriteFragText(w io.Writer, sums []FragSummary) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	end := "END"
	if len(sums) > 0 {
		end = report.FormatPermille(sums[0].EndPermille)
	}
	fmt.Fprintf(tw, "POLICY\tSEEDS\tUNALLOCATED @100%%\tUNALLOCATED @%s\n", end)
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%d\t%.2f%% ± %.2f\t%.2f%% ± %.2f\n", s.Policy, s.Seeds, s.At100Mean, s.At100Std, s.AtEndMean, s.AtEndStd)
	}
	return tw.Flush()
}

// WriteFragCSV writes every run's curve: policy, seed, arrived share of capacity (%),
// arrived and allocated GPUs, unallocated share (%).
func WriteFragCSV(w io.Writer, runs []FragRun) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"policy", "seed", "arrived_pct", "arrived_gpus", "allocated_gpus", "unallocated_pct"}); err != nil {
		return err
	}
	for _, r := range runs {
		for _, p := range r.Curve {
			rec := []string{r.Policy, strconv.FormatInt(r.Seed, 10), tenths(p.ArrivedPermille),
				report.FormatMilli(p.Arrived), report.FormatMilli(p.Allocated), tenths(p.UnallocatedPermille)}
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
