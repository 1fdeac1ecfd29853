package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/sim"
)

// JCTReport is a set of replays of one trace window: what was replayed, what was left
// out and why, and each policy's result.
type JCTReport struct {
	Window JCTWindow `json:"window"`
	Nodes  int       `json:"nodes"`
	GPUs   int       `json:"gpus"`
	// Jobs is the number of jobs replayed; Skipped the jobs of the trace left out, by
	// reason (Jobs plus every skip is every job of the trace file).
	Jobs    int            `json:"jobs"`
	Skipped map[string]int `json:"skipped,omitempty"`
	// UnknownVCs counts the jobs skipped for a virtual cluster the VC file lacks, by name.
	UnknownVCs map[string]int `json:"unknownVCs,omitempty"`
	Results    []JCTResult    `json:"results"`
}

// JCTMarkdown writes the report's queueing table: per policy the jobs finished, the
// mean, median, p95 and p99 of wait and JCT, and the CPU the replay took.
func JCTMarkdown(w io.Writer, r JCTReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d jobs submitted %s to %s, %d nodes (%d GPUs)%s.\n\n",
		r.Window.Name, r.Jobs, r.Window.From, r.Window.To, r.Nodes, r.GPUs, skippedText(r.Skipped))
	b.WriteString("| policy | finished | wait mean | wait p50 | wait p95 | wait p99 | JCT mean | JCT p50 | JCT p95 | JCT p99 | preempted | CPU |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range r.Results {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d | %.1f s |\n", x.Policy, x.Finished,
			dur(x.Wait.Mean), dur(x.Wait.P50), dur(x.Wait.P95), dur(x.Wait.P99),
			dur(x.JCT.Mean), dur(x.JCT.P50), dur(x.JCT.P95), dur(x.JCT.P99), x.Preempted, x.CPU.Seconds())
	}
	for _, x := range r.Results {
		if p := x.Prediction; p != nil {
			fmt.Fprintf(&b, "\n%s: the run times predicted at arrival are within 2x of the real ones for %s of %d jobs, within 10x for %s; %s are short.\n",
				x.Policy, permilleText(p.Within2xPermille), p.Jobs, permilleText(p.Within10xPermille), permilleText(p.UnderPermille))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ETAMarkdown writes the ETA accuracy of every policy replayed with ETAs: per policy and
// kind of runtime knowledge, the queued jobs, the share with an ETA at submission, and
// the median and p90 of |ETA − start|.
func ETAMarkdown(w io.Writer, r JCTReport) error {
	var b strings.Builder
	b.WriteString("| policy | runtimes | queued jobs | with an ETA | abs. error p50 | abs. error p90 | abs. error mean | started before the ETA |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|\n")
	for _, x := range r.Results {
		for _, e := range x.ETA {
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", x.Policy, e.Runtimes, e.Started,
				permilleText(e.SharePermille), dur(e.AbsError.P50), dur(e.P90), dur(e.AbsError.Mean), permilleText(e.EarlyPermille))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dur(s sim.Seconds) string { return sim.FormatDuration(s) }

// permilleText writes thousandths as a percentage with one decimal.
func permilleText(p int64) string { return fmt.Sprintf("%d.%d%%", p/10, p%10) }

// skippedText lists the skipped jobs by reason, sorted: "; skipped: 3 zero duration, ...".
func skippedText(skipped map[string]int) string {
	if len(skipped) == 0 {
		return ""
	}
	keys := make([]string, 0, len(skipped))
	for k := range skipped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", skipped[k], k)
	}
	return "; skipped: " + strings.Join(parts, ", ")
}
