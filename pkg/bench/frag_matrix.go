package bench

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// FragVariantResult is one trace variant's experiment: its cluster and pod list, what
// the input check found, and every policy's summary over seeds.
type FragVariantResult struct {
	Variant   string             `json:"variant"`
	Nodes     int                `json:"nodes"`
	GPUs      resources.MilliGPU `json:"gpus"`
	Pods      int                `json:"pods"`
	Input     FragInput          `json:"input"`
	Summaries []FragSummary      `json:"summaries"`
}

// FragRunFunc reports one finished run of RunFrag (done of total runs) and what it
// took: wall time, and the process's CPU time (user+system) over the run, which is the
// run's own only when runs go one at a time.
type FragRunFunc func(r FragRun, wall, cpu time.Duration, done, total int)

// RunFrag runs every policy over every seed on cfg, at most parallel runs at once (1:
// one after another, with cfg.Progress told of each pod; otherwise cfg.Progress is not
// used, runs share nothing). Runs come back in policy order, then seed order, whatever
// the parallelism, so the results do not depend on it. onRun, when set, is told of each
// finished run.
func RunFrag(cfg FragConfig, policies []string, seeds []int64, parallel int, onRun FragRunFunc) ([]FragRun, error) {
	type job struct {
		policy string
		seed   int64
	}
	var jobs []job
	for _, p := range policies {
		for _, s := range seeds {
			jobs = append(jobs, job{p, s})
		}
	}
	runs := make([]FragRun, len(jobs))
	errs := make([]error, len(jobs))
	if parallel > 1 {
		cfg.Progress = nil
	}
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, max(parallel, 1))
	for k, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			start, cpu0 := time.Now(), fragCPU()
			runs[k], errs[k] = RunFragOnce(cfg, PlacementPolicy(j.policy), j.seed)
			wall, cpu := time.Since(start), fragCPU()-cpu0
			mu.Lock()
			defer mu.Unlock()
			done++
			if onRun != nil && errs[k] == nil {
				onRun(runs[k], wall, cpu, done, len(jobs))
			}
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("policy %s, seed %d: %w", jobs[k].policy, jobs[k].seed, err)
		}
	}
	return runs, nil
}

// FragMarkdown renders the results of several variants as markdown: the share of arrived
// GPU demand left unallocated at 100% arrival per policy (Gantry's headline measure,
// beside the paper's FGD and the count of variants where Gantry's policy does better),
// the paper's measure (unallocated share of cluster GPUs) at 100% and at the end with the
// paper's published value beside each of its policies, and what the input checks found.
func FragMarkdown(results []FragVariantResult) string {
	var b strings.Builder
	policies := resultPolicies(results)
	seeds := 0
	if len(results) > 0 && len(results[0].Summaries) > 0 {
		seeds = results[0].Summaries[0].Seeds
	}
	fmt.Fprintf(&b, "Share of arrived GPU demand left unallocated at 100%% arrival (%%, mean ± std over %d seeds; lower is better)\n\n", seeds)
	writeMarkdownTable(&b, results, policies, true, func(s FragSummary) FragStat { return s.At100.OfArrived }, nil)
	for _, ours := range []string{placement.PolicyGantry, FragDefault} {
		if wins, compared := oursVsPaper(results, ours); compared > 0 {
			fmt.Fprintf(&b, "\n`%s` is below the paper's FGD on %d of %d variants.\n", ours, wins, compared)
		}
	}
	for _, at := range []struct {
		title string
		stat  func(FragSummary) FragStat
		col   int
	}{
		{"at 100% arrival", func(s FragSummary) FragStat { return s.At100.OfCapacity }, 0},
		{"at the end of the arrivals (130%)", func(s FragSummary) FragStat { return s.AtEnd.OfCapacity }, 1},
	} {
		fmt.Fprintf(&b, "\nThe paper's measure, 100 − allocated ÷ cluster GPUs (%%), %s; in brackets the paper's published mean\n\n", at.title)
		col := at.col
		writeMarkdownTable(&b, results, policies, false, at.stat, func(variant, policy string) string {
			a, c, ok := PaperFrag(variant, policy)
			if !ok {
				return ""
			}
			return fmt.Sprintf(" (%.2f)", [2]float64{a, c}[col])
		})
	}
	for _, r := range results {
		if s := r.Input.String(); s != "" {
			fmt.Fprintf(&b, "\nInput `%s`: %s.\n", r.Variant, s)
		}
	}
	return b.String()
}

// resultPolicies lists the policies of the results, in first-seen order.
func resultPolicies(results []FragVariantResult) []string {
	var out []string
	for _, r := range results {
		for _, s := range r.Summaries {
			if !slices.Contains(out, s.Policy) {
				out = append(out, s.Policy)
			}
		}
	}
	return out
}

// writeMarkdownTable writes one row per variant and one column per policy; withPaper adds
// the paper's FGD at 100%; note, when set, follows each cell.
func writeMarkdownTable(b *strings.Builder, results []FragVariantResult, policies []string, withPaper bool,
	stat func(FragSummary) FragStat, note func(variant, policy string) string) {
	b.WriteString("| variant |")
	for _, p := range policies {
		fmt.Fprintf(b, " %s |", p)
	}
	if withPaper {
		b.WriteString(" paper's fgd |")
	}
	b.WriteString("\n|---|")
	for range policies {
		b.WriteString("---:|")
	}
	if withPaper {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, r := range results {
		fmt.Fprintf(b, "| %s |", r.Variant)
		for _, p := range policies {
			cell := ""
			for _, s := range r.Summaries {
				if s.Policy == p {
					cell = stat(s).String()
					if note != nil {
						cell += note(r.Variant, p)
					}
				}
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		if withPaper {
			cell := ""
			if a, _, ok := PaperFrag(r.Variant, placement.PolicyFGD); ok {
				cell = fmt.Sprintf("%.2f", a)
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		b.WriteString("\n")
	}
}

// oursVsPaper counts the variants where one of Gantry's policies (gantry or default)
// leaves less of the arrived demand unallocated at 100% than the paper's FGD.
func oursVsPaper(results []FragVariantResult, ours string) (wins, compared int) {
	for _, r := range results {
		a, _, ok := PaperFrag(r.Variant, placement.PolicyFGD)
		for _, s := range r.Summaries {
			if s.Policy != ours || !ok {
				continue
			}
			compared++
			if s.At100.OfArrived.Mean < a {
				wins++
			}
		}
	}
	return wins, compared
}

// fragCPU is the process's user+system CPU time so far (0 where unknown).
func fragCPU() time.Duration {
	cpu, _ := processUsage()
	return cpu
}
