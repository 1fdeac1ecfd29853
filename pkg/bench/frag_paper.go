package bench

import "github.com/gantry-sched/gantry/pkg/placement"

// The FGD paper's published results (Weng et al., USENIX ATC'23), for comparison in the
// reports: the mean over seeds 42-51 of 100 − allocated ÷ cluster GPUs (%) at 100% and
// at 130% arrival, per trace variant and policy, read from the allocation curves its
// public simulator ships (hkust-adsl/kubernetes-scheduler-simulator,
// experiments/analysis/expected_results/analysis_allo_discrete.csv). They are published
// report statistics, hence floats.

// FragVariants are the paper's 17 openb pod lists (openb_pod_list_<variant>.csv).
func FragVariants() []string {
	return []string{"default", "cpu050", "cpu100", "cpu200", "cpu250",
		"gpushare40", "gpushare60", "gpushare80", "gpushare100",
		"gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33",
		"multigpu20", "multigpu30", "multigpu40", "multigpu50"}
}

// paperPolicies are the paper's policies in the order of paperFrag's rows.
func paperPolicies() []string {
	return []string{placement.PolicyRandom, placement.PolicyDotProd, placement.PolicyClustering,
		placement.PolicyPacking, placement.PolicyBestFit, placement.PolicyFGD}
}

// paperFrag is, per variant, the paper's unallocated share of capacity at 100% and at
// 130% arrival, one value per paperPolicies entry.
func paperFrag() map[string][2][6]float64 {
	return map[string][2][6]float64{
		"default":     {{13.70, 9.38, 8.35, 8.22, 7.14, 4.77}, {12.53, 9.15, 8.12, 8.00, 6.92, 4.61}},
		"cpu050":      {{10.98, 6.97, 6.48, 6.54, 6.44, 5.00}, {8.76, 6.73, 6.21, 6.28, 6.21, 4.79}},
		"cpu100":      {{12.57, 8.27, 7.58, 7.50, 6.74, 4.79}, {10.89, 8.05, 7.36, 7.28, 6.56, 4.65}},
		"cpu200":      {{16.97, 12.55, 10.33, 10.02, 7.85, 5.18}, {16.23, 12.30, 10.08, 9.78, 7.60, 4.96}},
		"cpu250":      {{20.00, 16.43, 12.25, 11.95, 8.79, 6.80}, {19.59, 16.20, 12.01, 11.72, 8.55, 6.59}},
		"gpushare40":  {{15.14, 10.70, 10.24, 10.23, 8.56, 6.04}, {14.00, 10.44, 9.98, 9.97, 8.31, 5.85}},
		"gpushare60":  {{17.19, 13.18, 13.10, 12.85, 10.94, 8.75}, {16.35, 12.89, 12.80, 12.55, 10.64, 8.60}},
		"gpushare80":  {{19.38, 15.86, 15.50, 15.35, 13.34, 10.92}, {18.78, 15.51, 15.15, 15.00, 12.99, 10.70}},
		"gpushare100": {{21.10, 18.02, 17.78, 17.87, 15.38, 13.36}, {20.56, 17.58, 17.35, 17.43, 14.99, 13.10}},
		"gpuspec10":   {{13.74, 9.83, 8.04, 7.76, 6.90, 5.34}, {12.57, 9.61, 7.82, 7.54, 6.70, 5.05}},
		"gpuspec20":   {{14.10, 11.71, 10.89, 10.72, 11.54, 5.34}, {12.76, 10.03, 7.75, 7.06, 6.70, 5.16}},
		"gpuspec25":   {{14.58, 14.56, 13.59, 13.23, 14.33, 6.09}, {13.06, 10.37, 7.92, 7.02, 6.77, 5.26}},
		"gpuspec33":   {{16.13, 20.18, 18.91, 17.78, 19.61, 12.16}, {13.54, 10.86, 7.88, 6.78, 6.91, 5.45}},
		"multigpu20":  {{13.08, 8.15, 6.66, 6.50, 6.27, 4.47}, {11.31, 7.94, 6.44, 6.29, 6.07, 4.35}},
		"multigpu30":  {{13.37, 6.89, 5.45, 5.30, 5.43, 3.64}, {10.73, 6.72, 5.28, 5.13, 5.28, 3.54}},
		"multigpu40":  {{14.62, 5.96, 4.65, 4.41, 4.90, 3.09}, {9.91, 5.81, 4.50, 4.26, 4.77, 3.01}},
		"multigpu50":  {{18.72, 5.27, 4.31, 3.94, 4.38, 2.91}, {9.73, 5.15, 4.19, 3.82, 4.26, 2.82}},
	}
}

// PaperFrag is the paper's published unallocated share of capacity (%) for a variant and
// one of its policies (random, dotprod, clustering, packing, bestfit, fgd) at 100% and
// 130% arrival; ok is false for anything else.
func PaperFrag(variant, policy string) (at100, at130 float64, ok bool) {
	row, found := paperFrag()[variant]
	if !found {
		return 0, 0, false
	}
	for k, p := range paperPolicies() {
		if p == policy {
			return row[0][k], row[1][k], true
		}
	}
	return 0, 0, false
}
