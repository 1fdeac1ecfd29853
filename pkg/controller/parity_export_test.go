package controller

import (
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/kubeenv"
)

// The parity test (parity_test.go) lives in package controller_test: it runs `gantry
// simulate` and `gantry convert` through internal/cli, which imports this package, so
// it cannot be compiled into it. These give it the package's control plane and the
// fake kubelet and CRD helper the other integration tests use.

// ParityEnv is the package's control plane (TestMain starts it); it skips t under
// -short and fails it when there is none.
func ParityEnv(t testing.TB) *kubeenv.Env { return kubeenv.Require(t, testEnv) }

var (
	// ParityFakeKubelet plays every node's kubelet until ctx ends: bound pods run,
	// pods being deleted are removed at once.
	ParityFakeKubelet = fakeKubelet
	// ParityMinimalCRD is a schemaless namespaced CRD for a job kind whose operator
	// the test plays.
	ParityMinimalCRD = minimalCRD
	// ParityLogger logs to stderr when GANTRY_TEST_LOG is set.
	ParityLogger = testLogger
)
