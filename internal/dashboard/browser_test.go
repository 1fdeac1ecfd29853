package dashboard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/gantry-sched/gantry/pkg/view"
)

// The browser tests load the dashboard in Debian's chromium, headless, through chromedp:
// each page must show the test cluster's objects and nothing may stick out at the right
// edge of an 800px or a 1600px window. A full-page PNG of each page goes to a temporary
// directory, and to $GANTRY_SCREENSHOT_DIR when it is set.

// chromiumPath finds the browser. Without one the test fails (it would otherwise pass
// without testing anything) unless -short is given.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("GANTRY_CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testing.Short() {
		t.Skip("no chromium on PATH (-short): the browser test needs `make test-env`")
	}
	t.Fatal("no chromium on PATH: run `make test-env` (hack/test-env.sh installs Debian's chromium), or set GANTRY_CHROMIUM to a Chromium binary")
	return ""
}

// browser starts one headless chromium for the test and returns a tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()))
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium %s: %v", path, err)
	}
	return tab
}

// pageFacts is what the test reads from a loaded page.
type pageFacts struct {
	Text string `json:"text"`
	// Overflow lists the elements sticking out at the right or scrolling sideways.
	Overflow []string `json:"overflow"`
	// PageWidth and ViewWidth are the document's scroll width and the window's width.
	PageWidth int `json:"pageWidth"`
	ViewWidth int `json:"viewWidth"`
	// Counts are the numbers of elements matching each selector asked for.
	Counts map[string]int `json:"counts"`
}

// factsScript measures the page: its text, what sticks out, and selector counts.
func factsScript(selectors []string) string {
	var sel strings.Builder
	for i, s := range selectors {
		if i > 0 {
			sel.WriteString(",")
		}
		fmt.Fprintf(&sel, "%q", s)
	}
	return `(() => {
  const vw = document.documentElement.clientWidth;
  const out = [];
  for (const e of document.querySelectorAll("main, header, table, figure, svg, section, pre, form, p, ul, details")) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const sideways = (e.scrollWidth || 0) > (e.clientWidth || 0) + 1 && e.clientWidth > 0;
    if (r.right > vw + 1 || sideways) {
      out.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && e.className.baseVal === undefined ? "." + e.className : "") +
        " right=" + Math.round(r.right) + " scroll=" + e.scrollWidth + " client=" + e.clientWidth);
    }
  }
  const counts = {};
  for (const s of [` + sel.String() + `]) counts[s] = document.querySelectorAll(s).length;
  return {text: document.body.innerText, overflow: out.slice(0, 20), pageWidth: document.documentElement.scrollWidth, viewWidth: vw, counts: counts};
})()`
}

// pageCheck is one page of a browser test: what its text must contain and how many
// elements some selectors must match.
type pageCheck struct {
	path   string
	text   []string
	counts map[string]int
}

// checkPages loads every page at 800px and 1600px wide, checks it and saves screenshots
// named <prefix>-<page>-<width>.png.
func checkPages(t *testing.T, tab context.Context, base, prefix string, pages []pageCheck) {
	t.Helper()
	dirs := []string{t.TempDir()}
	if d := os.Getenv("GANTRY_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for _, width := range []int64{800, 1600} {
		for _, pc := range pages {
			name := fmt.Sprintf("%s-%s-%d", prefix, pageName(pc.path), width)
			t.Run(name, func(t *testing.T) {
				facts := loadPage(t, tab, base+pc.path, width, pc.counts)
				for _, want := range pc.text {
					if !strings.Contains(facts.Text, want) {
						t.Errorf("%s at %dpx: the page does not show %q", pc.path, width, want)
					}
				}
				for sel, want := range pc.counts {
					if got := facts.Counts[sel]; got != want {
						t.Errorf("%s at %dpx: %d elements match %q, want %d", pc.path, width, got, sel, want)
					}
				}
				if facts.PageWidth > facts.ViewWidth || len(facts.Overflow) > 0 {
					t.Errorf("%s at %dpx: page %dpx wide in a %dpx window; sticking out or scrolling sideways: %v",
						pc.path, width, facts.PageWidth, facts.ViewWidth, facts.Overflow)
				}
				png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatalf("screenshot: %v", err)
				}
				for _, d := range dirs {
					if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}

// pageName names a page's screenshot: "overview", "nodes", "nodes-at-65m".
func pageName(path string) string {
	p, query, _ := strings.Cut(strings.Trim(path, "/"), "?")
	if p == "" {
		p = "overview"
	}
	if at, ok := strings.CutPrefix(query, "at="); ok {
		p += "-at-" + at
	}
	return p
}

// loadPage opens url in a window width pixels wide and measures it.
func loadPage(t *testing.T, tab context.Context, url string, width int64, counts map[string]int) pageFacts {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.EmulateViewport(width, 900), chromedp.Navigate(url), chromedp.WaitReady("main")); err != nil {
		t.Fatalf("loading %s: %v", url, err)
	}
	var selectors []string
	for s := range counts {
		selectors = append(selectors, s)
	}
	facts, err := chromedp.Run(tab, chromedp.Evaluate[pageFacts](factsScript(selectors)))
	if err != nil {
		t.Fatalf("measuring %s: %v", url, err)
	}
	return facts
}

// migDevices counts the MIG instances of a snapshot.
func migDevices(s view.Snapshot) int {
	n := 0
	for _, node := range s.Nodes {
		for _, g := range node.GPUs {
			for _, d := range g.Devices {
				if d.Profile != "" {
					n++
				}
			}
		}
	}
	return n
}

func TestBrowserHandMadeCluster(t *testing.T) {
	tab := browser(t)
	snap := testSnapshot()
	srv := serve(t, staticSource{snap: snap})
	checkPages(t, tab, srv.URL, "fixture", []pageCheck{
		{path: "/", text: []string{"batch", "prod", "research", "research-pool", "held", "simulated time 1h05m of 2h10m"},
			counts: map[string]int{"#queues tbody tr": 3, "#cohort-tree .cohort": 2}},
		{path: "/workloads", text: []string{"team-a/llm-pretrain", "InsufficientGPUs", "wait for team-a/llm-finetune", "in 25m00s", "QueueHeld"},
			counts: map[string]int{"tbody.pending-workload": 3, "table.running tbody tr": 3}},
		{path: "/nodes", text: []string{"h100-full-0", "h100-mig-0", "a100-shared-0", "a100-spot-1", "not ready", "unhealthy"},
			counts: map[string]int{"section.node": 4, "figure.gpu": 13, `g.device[data-kind="mig"]`: migDevices(snap),
				`g.device[data-kind="replica"]`: 4, "figure.gpu.unhealthy": 1, "section.node.down": 1}},
		{path: "/charts", counts: map[string]int{"#chart-test": 1}},
	})
}

// The dashboard of `gantry simulate -f examples/ --serve`, in the browser: the busiest
// moment by default, and 65m, when bert-pretrain waits for quota after its preemption.
func TestBrowserExamplesSimulation(t *testing.T) {
	tab := browser(t)
	replay, _ := examplesReplay(t)
	srv := serveTitled(t, replay, "Gantry simulation of examples/")
	busiest, err := replay.Snapshot(context.Background(), replay.Timeline().Default)
	if err != nil {
		t.Fatal(err)
	}
	checkPages(t, tab, srv.URL, "examples", []pageCheck{
		{path: "/", text: []string{"Gantry simulation of examples/", "global", "batch", "prod", "research"},
			counts: map[string]int{"#queues tbody tr": 3, "#cohort-tree .cohort": 1}},
		{path: "/workloads?at=65m", text: []string{"simulated time 1h05m", "ml-research/bert-pretrain", "WaitingForQuota",
			"raise ClusterQueue research's nominalQuota", "team-a/llm-finetune", "h100-full-"}},
		{path: "/nodes", text: []string{"h100-full-0", "h100-mig-1", "a100-mig-0", "spot-3"},
			counts: map[string]int{"section.node": len(busiest.Nodes), `g.device[data-kind="mig"]`: migDevices(busiest)}},
		{path: "/nodes?at=65m", text: []string{"not ready"}},
		{path: "/charts", counts: map[string]int{"#chart-allocation": 1, "#chart-capacity": 1, "#chart-wait-cdf": 1, "#chart-preemptions": 1}},
	})
}

// A live cluster's dashboard: the pages reload, and the charts draw the history.
func TestBrowserLiveCluster(t *testing.T) {
	tab := browser(t)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	snap := testSnapshot()
	snap.Source = "https://api.test:6443"
	live := NewLive(func(context.Context) (view.Snapshot, error) { return snap, nil }, LiveOptions{Now: clock.now, Refresh: time.Hour})
	for i := 0; i < 4; i++ {
		if _, err := live.Snapshot(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
		clock.t = clock.t.Add(time.Minute)
	}
	srv := serve(t, live)
	checkPages(t, tab, srv.URL, "live", []pageCheck{
		{path: "/", text: []string{"https://api.test:6443", "read at 2026-01-01", "reloads every 3600s", "batch"},
			counts: map[string]int{"#time-control": 0}},
		{path: "/charts", counts: map[string]int{"#chart-live-allocation": 1, "#chart-live-capacity": 1, "#chart-live-pending": 1, "#chart-live-wait": 1}},
	})
}

// Letting go of the time slider shows the moment it points at.
func TestBrowserTimeSlider(t *testing.T) {
	tab := browser(t)
	srv := serve(t, staticSource{snap: testSnapshot()})
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/nodes"), chromedp.WaitReady("#at-range")); err != nil {
		t.Fatal(err)
	}
	loaded := chromedp.Events(tab, page.LoadEventFired)
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](
		`(() => { const r = document.getElementById("at-range"); r.value = "3900"; r.dispatchEvent(new Event("change")); })()`)); err != nil {
		t.Fatal(err)
	}
	for _, err := range loaded {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if err := chromedp.Do(tab, chromedp.WaitReady("#moment")); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(tab, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(loc, "/nodes?at=3900") {
		t.Errorf("the slider went to %s, want /nodes?at=3900", loc)
	}
	moment, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("moment").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(moment, "simulated time 1h05m of 2h10m") {
		t.Errorf("after the slider the page shows %q", moment)
	}
}
