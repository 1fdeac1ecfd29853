package kubeenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// KubeVersion is the Kubernetes release hack/test-env.sh builds.
const KubeVersion = "v1.34.2"

// HowToInstall is the hint every "binaries missing" message carries.
const HowToInstall = "run `make test-env` (hack/test-env.sh) to install etcd and build kube-apiserver/kube-controller-manager/kubectl"

// Binaries are the absolute paths of the control-plane programs.
type Binaries struct {
	Etcd              string
	APIServer         string
	ControllerManager string
}

// BinDir is where hack/test-env.sh puts kube-apiserver and kube-controller-manager:
// $GANTRY_KUBE_BIN, else ${GANTRY_CACHE:-$HOME/.cache/gantry}/k8s/<version>/bin.
func BinDir() string {
	if d := os.Getenv("GANTRY_KUBE_BIN"); d != "" {
		return d
	}
	cache := os.Getenv("GANTRY_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		cache = filepath.Join(home, ".cache", "gantry")
	}
	return filepath.Join(cache, "k8s", KubeVersion, "bin")
}

// FindBinaries locates etcd (on PATH or $GANTRY_ETCD) and the kube binaries in BinDir.
// The error lists everything missing and says how to install it.
func FindBinaries(needControllerManager bool) (Binaries, error) {
	var b Binaries
	var missing []error
	if p := os.Getenv("GANTRY_ETCD"); p != "" {
		b.Etcd = p
	} else if p, err := exec.LookPath("etcd"); err == nil {
		b.Etcd = p
	} else {
		missing = append(missing, errors.New("etcd is not on PATH"))
	}
	dir := BinDir()
	b.APIServer = filepath.Join(dir, "kube-apiserver")
	if !isExecutable(b.APIServer) {
		missing = append(missing, fmt.Errorf("%s is missing", b.APIServer))
	}
	b.ControllerManager = filepath.Join(dir, "kube-controller-manager")
	if needControllerManager && !isExecutable(b.ControllerManager) {
		missing = append(missing, fmt.Errorf("%s is missing", b.ControllerManager))
	}
	if len(missing) > 0 {
		return b, fmt.Errorf("kubeenv: %w; %s", errors.Join(missing...), HowToInstall)
	}
	return b, nil
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
