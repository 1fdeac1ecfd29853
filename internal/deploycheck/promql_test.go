package deploycheck

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// A small PromQL reader for the chart's dashboard and alert expressions: Prometheus's
// own parser is a large module the project does not depend on. It tokenizes, checks
// brackets, operators and function names, and returns the metric names an expression
// selects, which is what the tests need: every series the chart reads must be one
// Gantry exports.

type tokenKind int

const (
	tokIdent    tokenKind = iota // metric, label, function or keyword
	tokNumber                    // 1, 0.95, 1e3, and durations 5m, 1h30m
	tokString                    // "...", '...', `...`
	tokVariable                  // Grafana's $name, ${name}
	tokOpen                      // ( { [
	tokClose                     // ) } ]
	tokComma
	tokOperator // + - * / % ^ == != > < >= <= = =~ !~ :
)

type token struct {
	kind tokenKind
	text string
}

// lexPromQL splits expr into tokens; anything PromQL does not allow is an error.
func lexPromQL(expr string) ([]token, error) {
	var out []token
	r := []rune(expr)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case unicode.IsSpace(c):
			i++
		case c == '#': // a comment runs to the end of the line
			for i < len(r) && r[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(r) && r[j] != c {
				if r[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(r) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			out = append(out, token{tokString, string(r[i : j+1])})
			i = j + 1
		case c == '$':
			j := i + 1
			if j < len(r) && r[j] == '{' {
				for j < len(r) && r[j] != '}' {
					j++
				}
				j++
			} else {
				for j < len(r) && (isIdentRune(r[j])) {
					j++
				}
			}
			if j-i < 2 || j > len(r) {
				return nil, fmt.Errorf("bad variable at %d", i)
			}
			out = append(out, token{tokVariable, string(r[i:j])})
			i = j
		case unicode.IsDigit(c) || (c == '.' && i+1 < len(r) && unicode.IsDigit(r[i+1])):
			j := i
			for j < len(r) && (unicode.IsDigit(r[j]) || unicode.IsLetter(r[j]) || r[j] == '.' ||
				((r[j] == '+' || r[j] == '-') && (r[j-1] == 'e' || r[j-1] == 'E'))) {
				j++
			}
			out = append(out, token{tokNumber, string(r[i:j])})
			i = j
		case isIdentRune(c) && !unicode.IsDigit(c):
			j := i
			for j < len(r) && (isIdentRune(r[j]) || r[j] == ':') {
				j++
			}
			out = append(out, token{tokIdent, string(r[i:j])})
			i = j
		case strings.ContainsRune("({[", c):
			out = append(out, token{tokOpen, string(c)})
			i++
		case strings.ContainsRune(")}]", c):
			out = append(out, token{tokClose, string(c)})
			i++
		case c == ',':
			out = append(out, token{tokComma, ","})
			i++
		default:
			op := operatorAt(r[i:])
			if op == "" {
				return nil, fmt.Errorf("unexpected %q at %d", c, i)
			}
			out = append(out, token{tokOperator, op})
			i += len([]rune(op))
		}
	}
	return out, nil
}

func isIdentRune(c rune) bool { return c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) }

func operatorAt(r []rune) string {
	s := string(r[:min(2, len(r))])
	for _, op := range []string{"==", "!=", ">=", "<=", "=~", "!~"} {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	if strings.ContainsRune("+-*/%^><=:", r[0]) {
		return string(r[0])
	}
	return ""
}

// promqlKeywords are the identifiers that are neither metrics nor functions;
// labelListKeywords are followed by a parenthesised list of label names.
const (
	promqlKeywords    = "and or unless by without on ignoring group_left group_right offset bool inf nan atan2"
	labelListKeywords = "by without on ignoring group_left group_right"
)

// promqlAggregations are PromQL's aggregation operators; promqlFunctions are they and
// its functions.
const (
	promqlAggregations = "sum min max avg group stddev stdvar count count_values bottomk topk quantile limitk limit_ratio"
	promqlFunctions    = promqlAggregations + ` abs absent absent_over_time ceil changes clamp clamp_max clamp_min day_of_month day_of_week day_of_year days_in_month
	delta deriv exp floor histogram_avg histogram_count histogram_fraction histogram_quantile histogram_stddev
	histogram_stdvar histogram_sum holt_winters double_exponential_smoothing hour idelta increase irate label_join
	label_replace ln log2 log10 minute month predict_linear rate resets round scalar sgn sort sort_desc sort_by_label
	sort_by_label_desc sqrt time timestamp vector year avg_over_time min_over_time max_over_time sum_over_time
	count_over_time quantile_over_time stddev_over_time stdvar_over_time last_over_time present_over_time mad_over_time
	acos acosh asin asinh atan atanh cos cosh sin sinh tan tanh deg pi rad`
)

// inList reports whether word is one of the space-separated words of list.
func inList(list, word string) bool { return slices.Contains(strings.Fields(list), word) }

// promqlMetrics returns the metric names expr selects (sorted, once each), or why it
// is not a well-formed expression.
func promqlMetrics(expr string) ([]string, error) {
	toks, err := lexPromQL(expr)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty expression")
	}
	w := promqlWalk{names: map[string]bool{}}
	for i, t := range toks {
		if err := w.step(toks, i, t); err != nil {
			return nil, fmt.Errorf("%w (token %d %q)", err, i, t.text)
		}
	}
	if len(w.stack) > 0 {
		return nil, fmt.Errorf("%d unclosed bracket(s)", len(w.stack))
	}
	if last := toks[len(toks)-1]; last.kind == tokOperator || last.kind == tokComma {
		return nil, fmt.Errorf("ends with %q", last.text)
	}
	out := make([]string, 0, len(w.names))
	for n := range w.names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// promqlWalk is the reader's state: open brackets (a "(" opened by a label-list
// keyword is "L"), and the metric names met.
type promqlWalk struct {
	stack []string
	names map[string]bool
}

func (w *promqlWalk) top() string {
	if len(w.stack) == 0 {
		return ""
	}
	return w.stack[len(w.stack)-1]
}

func (w *promqlWalk) step(toks []token, i int, t token) error {
	var prev, next token
	if i > 0 {
		prev = toks[i-1]
	}
	if i+1 < len(toks) {
		next = toks[i+1]
	}
	switch t.kind {
	case tokOpen:
		if t.text == "(" && prev.kind == tokIdent && inList(labelListKeywords, prev.text) {
			w.stack = append(w.stack, "L")
		} else {
			w.stack = append(w.stack, t.text)
		}
		if t.text == "(" && next.kind == tokClose && !(prev.kind == tokIdent && (inList(promqlFunctions, prev.text) || inList(labelListKeywords, prev.text))) {
			return fmt.Errorf("empty parentheses")
		}
	case tokClose:
		want := map[string]string{")": "(", "}": "{", "]": "["}[t.text]
		got := w.top()
		if got == "L" {
			got = "("
		}
		if got != want {
			return fmt.Errorf("%q closes %q", t.text, w.top())
		}
		w.stack = w.stack[:len(w.stack)-1]
	case tokOperator:
		if prev.kind == tokOperator && t.text != "-" && t.text != "+" {
			return fmt.Errorf("two operators in a row")
		}
		if i == 0 && t.text != "-" && t.text != "+" {
			return fmt.Errorf("starts with an operator")
		}
	case tokIdent:
		return w.ident(t, next)
	}
	return nil
}

// ident classifies an identifier by where it stands: a label inside {...} or a label
// list, a duration unit inside [...], a keyword, a function (before "("), else a metric.
func (w *promqlWalk) ident(t, next token) error {
	switch top := w.top(); {
	case top == "{" || top == "L" || top == "[":
		return nil
	case inList(promqlKeywords, t.text):
		return nil
	case next.kind == tokIdent && (next.text == "by" || next.text == "without"):
		if !inList(promqlAggregations, t.text) {
			return fmt.Errorf("%s is not an aggregation, before %s", t.text, next.text)
		}
		return nil
	case next.kind == tokOpen && next.text == "(":
		if !inList(promqlFunctions, t.text) {
			return fmt.Errorf("unknown function %s", t.text)
		}
		return nil
	}
	w.names[t.text] = true
	return nil
}

func TestPromQLMetrics(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		want    []string
		wantErr string
	}{
		{expr: `up{job="gantry-node-agent"} == 0`, want: []string{"up"}},
		{expr: `sum by (cluster_queue, le) (rate(gantry_admission_wait_time_seconds_bucket{cluster_queue=~"$cluster_queue"}[$__rate_interval]))`,
			want: []string{"gantry_admission_wait_time_seconds_bucket"}},
		{expr: "(sum by (cluster_queue) (gantry_pending_workloads) > 0)\nand on (cluster_queue) (x - y{a!~\"b\"}) unless on (cluster_queue) (z > 0)",
			want: []string{"gantry_pending_workloads", "x", "y", "z"}},
		{expr: `100 * sum(a) / sum by (pool) (b + c) > 20`, want: []string{"a", "b", "c"}},
		{expr: `count by (node) (a) unless on (node) b`, want: []string{"a", "b"}},
		{expr: `sum(rate(x[1h30m])) or vector(0)`, want: []string{"x"}},
		{expr: `histogram_quantile(0.95, sum by (le) (rate(h_bucket[5m]))) > 1e3`, want: []string{"h_bucket"}},
		{expr: `sum(rate(x[5m])`, wantErr: "unclosed"},
		{expr: `sum(rate(x[5m)))`, wantErr: "closes"},
		{expr: `sumz(x)`, wantErr: "unknown function sumz"},
		{expr: `rate by (a) (x)`, wantErr: "not an aggregation"},
		{expr: `x >`, wantErr: "ends with"},
		{expr: `x > * y`, wantErr: "two operators"},
		{expr: `x{a="b}`, wantErr: "unterminated string"},
		{expr: `x ; y`, wantErr: "unexpected"},
		{expr: ``, wantErr: "empty"},
	} {
		got, err := promqlMetrics(tc.expr)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.expr, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.expr, got, err, tc.want)
		}
	}
}
