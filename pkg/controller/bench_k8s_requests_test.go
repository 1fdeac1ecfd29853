//go:build k8sscale

package controller

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// apiRequests counts the API server's requests by verb and resource (its
// apiserver_request_total series), for where a scenario's requests went.
type apiRequests map[string]float64

// readAPIRequests scrapes the API server's own counters.
func readAPIRequests(ctx context.Context, cs kubernetes.Interface) (apiRequests, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("API server metrics: %w", err)
	}
	out := apiRequests{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		labels := line[len("apiserver_request_total{"):end]
		key := label(labels, "verb") + " " + label(labels, "resource")
		if sub := label(labels, "subresource"); sub != "" {
			key += "/" + sub
		}
		out[key] += v
	}
	return out, sc.Err()
}

// label is the value of name in a series' label text (`a="x",b="y"`).
func label(labels, name string) string {
	i := strings.Index(labels, name+`="`)
	if i < 0 || (i > 0 && labels[i-1] != ',') {
		return ""
	}
	rest := labels[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

// since lists the requests made after before, the most first, skipping reads
// (watch, list, get) and anything under min.
func (r apiRequests) since(before apiRequests, min float64) string {
	type kv struct {
		k string
		v float64
	}
	var rows []kv
	for k, v := range r {
		verb, _, _ := strings.Cut(k, " ")
		if d := v - before[k]; d >= min && verb != "WATCH" && verb != "LIST" && verb != "GET" {
			rows = append(rows, kv{k, d})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].v > rows[j].v || rows[i].v == rows[j].v && rows[i].k < rows[j].k })
	parts := make([]string, len(rows))
	for i, row := range rows {
		parts[i] = fmt.Sprintf("%s %.0f", row.k, row.v)
	}
	return strings.Join(parts, ", ")
}
