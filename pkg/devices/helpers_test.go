package devices_test

import (
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
