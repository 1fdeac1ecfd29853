package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/spf13/pflag"
)

// The controller's waitForPodsReady comes from --kueue-config, read by the loader
// simulate uses, with the --pods-ready-* and --requeue-backoff-* flags over it.
func TestControllerPodsReadyConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	v1 := write("v1beta1.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady: {enable: true, timeout: 7m}\n")
	bad := write("bad.yaml", "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady: {enable: true, timeout: soon}\n")
	fromV1 := api.DefaultWaitForPodsReady(5*time.Minute, true)
	fromV1.Timeout, fromV1.RecoveryTimeout = 7*time.Minute, 7*time.Minute
	flagsOverV1 := fromV1
	flagsOverV1.BlockAdmission, flagsOverV1.Requeuing.Limited, flagsOverV1.Requeuing.BackoffLimit = false, true, 2
	cases := []struct {
		name string
		args []string
		want *api.WaitForPodsReady
		err  string
	}{
		{"off by default", nil, nil, ""},
		{"timeout flag", []string{"--pods-ready-timeout=2m"}, ptrTo(api.DefaultWaitForPodsReady(2*time.Minute, false)), ""},
		{"Configuration file", []string{"--kueue-config=" + v1}, &fromV1, ""},
		{"flags over the file", []string{"--kueue-config=" + v1, "--pods-ready-block-admission=false", "--requeue-backoff-limit=2"}, &flagsOverV1, ""},
		{"bad file names it", []string{"--kueue-config=" + bad}, nil, "bad.yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newControllerCommand()
			var f controllerFlags
			fl := pflag.NewFlagSet("controller", pflag.ContinueOnError)
			requeueFlags(fl, &f.requeue)
			f.podsReady.registerConfig(fl)
			fl.StringVar(&f.kueueConfig, "kueue-config", "", "")
			fl.VisitAll(func(fg *pflag.Flag) { // the command registers the same flags
				if cmd.Flags().Lookup(fg.Name) == nil {
					t.Fatalf("gantry controller has no --%s", fg.Name)
				}
			})
			if err := fl.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := f.podsReadyConfig()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != nil {
				got.Source = api.Source{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
