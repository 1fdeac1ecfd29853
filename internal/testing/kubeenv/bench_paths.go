package kubeenv

import (
	"errors"
	"fmt"
	"path/filepath"
)

// HowToInstallBench is the hint a "bench binaries missing" message carries.
const HowToInstallBench = "run `bash hack/bench-env.sh` (part of `make bench-k8s`) to build kube-scheduler and kwok"

// BenchBinaries are the programs the side-by-side benchmark runs next to the control
// plane: the upstream scheduler of the same release and KWOK's fake kubelets.
type BenchBinaries struct {
	Scheduler string
	KWOK      string
}

// FindBenchBinaries locates kube-scheduler and kwok in BinDir, where hack/bench-env.sh
// puts them. The error lists everything missing and says how to build it.
func FindBenchBinaries() (BenchBinaries, error) {
	dir := BinDir()
	b := BenchBinaries{Scheduler: filepath.Join(dir, "kube-scheduler"), KWOK: filepath.Join(dir, "kwok")}
	var missing []error
	for _, p := range []string{b.Scheduler, b.KWOK} {
		if !isExecutable(p) {
			missing = append(missing, fmt.Errorf("%s is missing", p))
		}
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("kubeenv: %w; %s", errors.Join(missing...), HowToInstallBench)
	}
	return b, nil
}
