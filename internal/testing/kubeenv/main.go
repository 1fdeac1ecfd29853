package kubeenv

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// RunMain is a TestMain body: it starts one control plane for the test package, runs
// the tests and stops it. Use it as
//
//	var env *kubeenv.Env
//	func TestMain(m *testing.M) { os.Exit(kubeenv.RunMain(m, kubeenv.Options{}, &env)) }
//
// Under -short it starts nothing and leaves *env nil; tests call Require, which skips
// them. Otherwise a control plane that cannot start fails the whole package with the
// reason (missing binaries name `make test-env`).
func RunMain(m *testing.M, opts Options, env **Env) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		return m.Run()
	}
	e, err := Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: cannot start the test control plane:", err)
		return 1
	}
	*env = e
	defer e.Stop()
	return m.Run()
}

// Require skips t under -short (no control plane there) and otherwise fails it when
// env is nil, so a test can never pass without having run against the API server.
func Require(t testing.TB, env *Env) *Env {
	t.Helper()
	if env != nil {
		return env
	}
	if testing.Short() {
		t.Skip("needs a control plane; skipped under -short (" + HowToInstall + ")")
	}
	t.Fatal("no control plane: call kubeenv.RunMain from TestMain; " + HowToInstall)
	return nil
}
