package devices_test

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// tb is what the helpers need from *testing.T and *rapid.T alike.
type tb interface {
	Helper()
	Fatal(args ...any)
}

// req builds a Request from resource name/amount pairs through ParseRequest.
func req(t tb, kv ...any) devices.Request {
	t.Helper()
	v := resources.Vector{}
	for i := 0; i+1 < len(kv); i += 2 {
		v[resources.Name(kv[i].(string))] = resources.Amount(kv[i+1].(int))
	}
	r, err := devices.ParseRequest(v)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustModel(t tb, name string) devices.Model {
	t.Helper()
	m, err := devices.LookupModel(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameVector compares vectors, treating missing and zero entries alike.
func sameVector(a, b resources.Vector) bool {
	for _, k := range append(a.Names(), b.Names()...) {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// wantErr fails t unless err is nil when want is empty, or holds want otherwise.
func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("error %v, want none", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("error %v, want one containing %q", err, want)
	}
}
