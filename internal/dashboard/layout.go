package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/view"
)

// layoutData is what templates/layout.html renders around a page.
type layoutData struct {
	Title, Page string
	Source      string
	// Moment says which moment the page shows; Query carries ?at= to the other pages.
	Moment  string
	Query   string
	Time    *timeControl
	Refresh int64 // seconds; 0: no reload
	Body    any
}

// timeControl is the simulated-time form of a seekable source.
type timeControl struct {
	At, End               string
	AtSeconds, EndSeconds int64
	Step                  int64
	Links                 []timeLink
}

type timeLink struct {
	Label, Href string
}

// moment reads ?at= (a simulated time such as 65m, 1h30m or 3900) for a seekable
// source; without it, the source's default moment.
func (h *Handler) moment(r *http.Request) (time.Duration, error) {
	tl := h.src.Timeline()
	v := r.URL.Query().Get("at")
	if !tl.Seekable || v == "" {
		return tl.Default, nil
	}
	at, err := api.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("?at=%s: %v", v, err)
	}
	if at > tl.End {
		return 0, fmt.Errorf("?at=%s: after the end of the simulated run, %s", v, formatDuration(tl.End))
	}
	return at, nil
}

// layout fills the page shell: the source, the moment and, for a simulation, the time
// control with links to the start, the busiest moment, a step either way and the end.
func (h *Handler) layout(name string, snap view.Snapshot, at time.Duration, body any) layoutData {
	tl := h.src.Timeline()
	d := layoutData{Title: h.title, Page: name, Source: snap.Source, Body: body}
	if !tl.Seekable {
		d.Refresh = int64(tl.Refresh / time.Second)
		d.Moment = "read at " + snap.At.UTC().Format("2006-01-02 15:04:05") + " UTC"
		return d
	}
	d.Moment = "simulated time " + formatDuration(at) + " of " + formatDuration(tl.End)
	d.Query = "?" + url.Values{"at": {formatDuration(at)}}.Encode()
	step := timeStep(tl.End)
	tc := &timeControl{At: formatDuration(at), End: formatDuration(tl.End),
		AtSeconds: int64(at / time.Second), EndSeconds: int64(tl.End / time.Second), Step: sliderStep(tl.End)}
	link := func(label string, t time.Duration) timeLink {
		t = min(max(t, 0), tl.End)
		return timeLink{Label: label, Href: "?" + url.Values{"at": {strconv.FormatInt(int64(t/time.Second), 10)}}.Encode()}
	}
	tc.Links = []timeLink{link("start", 0), link("− "+formatDuration(step), at-step), link("busiest", tl.Default),
		link("+ "+formatDuration(step), at+step), link("end", tl.End)}
	d.Time = tc
	return d
}

// sliderStep is the time slider's step in seconds: a minute, or a second for runs
// under 20 minutes.
func sliderStep(end time.Duration) int64 {
	if end >= 20*time.Minute {
		return 60
	}
	return 1
}

// timeStep is the step of the time control's links: about a twentieth of the run,
// rounded to a whole minute (or second, for runs under 20 minutes).
func timeStep(end time.Duration) time.Duration {
	step := end / 20
	if step >= time.Minute {
		return step.Truncate(time.Minute)
	}
	return max(step.Truncate(time.Second), time.Second)
}
