package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

func loadPodsReady(t *testing.T, doc string) (*api.WaitForPodsReady, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := Load([]string{path}, nil)
	if err != nil {
		return nil, err
	}
	return objs.PodsReady, nil
}

// waitForPodsReady is read with each version's Kueue defaults and the fields given.
func TestKueueConfigPodsReady(t *testing.T) {
	const v1, v2 = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n", "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
	cases := []struct {
		name string
		doc  string
		want *api.WaitForPodsReady
	}{
		{"v1beta1 without enable: off", v1 + "waitForPodsReady: {timeout: 3m}\n", nil},
		{"v1beta1 enabled: 5m, blockAdmission", v1 + "waitForPodsReady: {enable: true}\n", ptr(api.DefaultWaitForPodsReady(5*time.Minute, true))},
		{"v1beta2 without the section: 30m", v2, ptr(api.DefaultWaitForPodsReady(30*time.Minute, false))},
		{"v1beta2 gate off", v2 + "featureGates: {DisableWaitForPodsReady: true}\n", nil},
		{"v1beta2 all fields", v2 + "waitForPodsReady:\n  timeout: 10m\n  blockAdmission: true\n  recoveryTimeout: 3m\n  requeuingStrategy:\n    timestamp: Creation\n    backoffLimitCount: 0\n    backoffBaseSeconds: 10\n    backoffMaxSeconds: 100\n",
			&api.WaitForPodsReady{Timeout: 10 * time.Minute, BlockAdmission: true, RecoveryTimeout: 3 * time.Minute,
				Requeuing: api.PodsReadyRequeuing{Timestamp: api.RequeueAtCreation, Limited: true, BackoffBase: 10 * time.Second, BackoffMax: 100 * time.Second}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadPodsReady(t, tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			if got != nil {
				got.Source = api.Source{}
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Bad waitForPodsReady settings are errors naming the field.
func TestKueueConfigPodsReadyErrors(t *testing.T) {
	const v2 = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady:\n"
	for doc, field := range map[string]string{
		v2 + "  enable: true\n":                                                        "waitForPodsReady.enable",
		v2 + "  timeout: soon\n":                                                       "waitForPodsReady.timeout",
		v2 + "  timeout: 0s\n":                                                         "waitForPodsReady.timeout",
		v2 + "  recoveryTimeout: -1m\n":                                                "waitForPodsReady.recoveryTimeout",
		v2 + "  requeuingStrategy: {timestamp: Later}\n":                               "requeuingStrategy.timestamp",
		v2 + "  requeuingStrategy: {backoffLimitCount: -1}\n":                          "backoffLimitCount",
		v2 + "  requeuingStrategy: {backoffBaseSeconds: 100, backoffMaxSeconds: 10}\n": "backoffMaxSeconds",
		v2 + "  blockAdmission: yes please\n":                                          "waitForPodsReady.blockAdmission",
		v2 + "  unknownKnob: 1\n":                                                      "unknownKnob",
	} {
		_, err := loadPodsReady(t, doc)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%q: error %v, want one naming %s", doc, err, field)
		}
	}
}
