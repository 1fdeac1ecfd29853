package dashboard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/view"
)

// serve starts the dashboard over src on an httptest server.
func serve(t *testing.T, src Source) *httptest.Server {
	t.Helper()
	return serveTitled(t, src, "Gantry test")
}

// serveTitled is serve with the pages' title.
func serveTitled(t *testing.T, src Source, title string) *httptest.Server {
	t.Helper()
	h, err := New(src, Options{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// get fetches path and returns the status, content type and body.
func get(t *testing.T, srv *httptest.Server, method, path string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(body)
}

func TestRoutes(t *testing.T) {
	srv := serve(t, staticSource{snap: testSnapshot()})
	for _, tc := range []struct {
		method, path string
		status       int
		contentType  string
		want         []string
	}{
		{"GET", "/", 200, "text/html", []string{`data-queue="batch"`, `data-cohort="research-pool"`, "held", "simulated time 1h05m of 2h10m", `href="/workloads?at=1h05m"`}},
		{"GET", "/?at=30m", 200, "text/html", []string{"simulated time 30m00s of 2h10m", `value="1800"`}},
		{"GET", "/workloads", 200, "text/html", []string{"InsufficientGPUs", "wait for team-a/llm-finetune to finish", "in 25m00s", "h100-full-0", "QueueHeld", "evicted"}},
		{"GET", "/nodes", 200, "text/html", []string{`data-node="h100-mig-0"`, `data-profile="3g.40gb"`, "not ready", "unhealthy", "team-b/notebook-2"}},
		{"GET", "/charts", 200, "text/html", []string{`id="chart-test"`}},
		{"GET", "/api/snapshot", 200, "application/json", []string{`"source":"simulation"`}},
		{"GET", "/healthz", 200, "text/plain", []string{"ok"}},
		{"GET", "/static/dashboard.css", 200, "text/css", []string{"overflow-wrap"}},
		{"GET", "/static/dashboard.js", 200, "javascript", []string{"at-range"}},
		{"HEAD", "/", 200, "text/html", nil},
		{"GET", "/?at=1h99x", 400, "text/plain", []string{"?at=1h99x"}},
		{"GET", "/api/snapshot?at=3h", 400, "text/plain", []string{"after the end of the simulated run, 2h10m"}},
		{"GET", "/nope", 404, "text/plain", nil},
		{"POST", "/", 405, "text/plain", nil},
		{"DELETE", "/api/snapshot", 405, "text/plain", nil},
		{"PUT", "/healthz", 405, "text/plain", nil},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			status, ct, body := get(t, srv, tc.method, tc.path)
			if status != tc.status {
				t.Fatalf("status %d, want %d; body:\n%s", status, tc.status, body)
			}
			if !strings.Contains(ct, tc.contentType) {
				t.Errorf("Content-Type %q, want %q", ct, tc.contentType)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q", w)
				}
			}
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	srv := serve(t, staticSource{snap: testSnapshot()})
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", got)
	}
}

func TestSnapshotJSONShape(t *testing.T) {
	srv := serve(t, staticSource{snap: testSnapshot()})
	_, _, body := get(t, srv, "GET", "/api/snapshot")
	var got view.Snapshot
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("not a Snapshot: %v", err)
	}
	want := testSnapshot()
	if len(got.Queues) != len(want.Queues) || len(got.Nodes) != len(want.Nodes) || len(got.Workloads) != len(want.Workloads) {
		t.Fatalf("got %d queues, %d nodes, %d workloads; want %d, %d, %d",
			len(got.Queues), len(got.Nodes), len(got.Workloads), len(want.Queues), len(want.Nodes), len(want.Workloads))
	}
	if got.Workloads[0].ETA == nil || *got.Workloads[0].ETA != *want.Workloads[0].ETA {
		t.Errorf("ETA %v, want %v", got.Workloads[0].ETA, *want.Workloads[0].ETA)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"source", "cohorts", "queues", "workloads", "nodes"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
}

// hostile is a name that would run script if written into a page unescaped.
const hostile = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`

func hostileSnapshot() view.Snapshot {
	s := testSnapshot()
	s.Source = hostile
	s.Cohorts[0].Name = hostile
	s.Queues[0].Name, s.Queues[0].Cohort = hostile, hostile
	s.Queues[0].Quota[0].Flavor = hostile
	s.Workloads[0].ID, s.Workloads[0].ClusterQueue = hostile, hostile
	s.Workloads[0].Reason, s.Workloads[0].Remedy = hostile, hostile
	s.Workloads[0].Details = []string{hostile}
	s.Workloads[1].Nodes = []string{hostile}
	s.Nodes[0].Name, s.Nodes[0].Pool = hostile, hostile
	s.Nodes[0].GPUs[0].Model = hostile
	s.Nodes[0].GPUs[0].Devices[0].ID = hostile
	s.Nodes[0].GPUs[0].Devices[0].Holder = hostile
	return s
}

func TestHostileNamesEscaped(t *testing.T) {
	srv := serve(t, staticSource{snap: hostileSnapshot()})
	for _, path := range []string{"/", "/workloads", "/nodes", "/charts", "/api/snapshot"} {
		t.Run(path, func(t *testing.T) {
			status, _, body := get(t, srv, "GET", path)
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			for _, bad := range []string{"<script>alert", "<img src=x", `"><img`} {
				if strings.Contains(body, bad) {
					t.Errorf("page carries %q unescaped", bad)
				}
			}
			if path != "/charts" && !strings.Contains(body, "alert(1)") {
				t.Errorf("the hostile name is not on the page at all (escaped or not)")
			}
		})
	}
}
