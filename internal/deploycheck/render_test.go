package deploycheck

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

const chartDir = "../../charts/gantry"

// release is what a `helm template <name> charts/gantry -n <namespace>` would get.
type release struct {
	name, namespace string
	values          map[string]any // merged over values.yaml
}

// renderChart renders every template of the chart and splits the output into YAML
// documents (comment-only documents dropped), each labelled with its template file.
func renderChart(t *testing.T, r release) []document {
	t.Helper()
	tpl := parseTemplates(t)
	data := map[string]any{
		"Values":  mergeValues(readYAMLMap(t, filepath.Join(chartDir, "values.yaml")), r.values),
		"Release": map[string]any{"Name": r.name, "Namespace": r.namespace},
		"Chart":   readYAMLMap(t, filepath.Join(chartDir, "Chart.yaml")),
		"Files":   chartFiles{dir: chartDir},
	}
	data["Chart"] = chartFields(data["Chart"].(map[string]any))
	var docs []document
	for _, name := range templateFiles(t) {
		var out bytes.Buffer
		if err := tpl.ExecuteTemplate(&out, name, data); err != nil {
			t.Fatalf("rendering %s: %v", name, err)
		}
		docs = append(docs, splitDocuments(name, out.String())...)
	}
	return docs
}

// chartFiles is Helm's .Files: the chart's files outside templates/, by path. A file
// that is missing is an error here (Helm would render it empty).
type chartFiles struct{ dir string }

// Get returns a file's content, as Helm's .Files.Get.
func (f chartFiles) Get(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(name)))
	return string(b), err
}

// chartFields gives Chart.yaml's keys Helm's capitalised names (.Chart.AppVersion).
func chartFields(c map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range c {
		out[strings.ToUpper(k[:1])+k[1:]] = v
	}
	return out
}

func templateFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(chartDir, "templates", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates in %s: %v", chartDir, err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	sort.Strings(files)
	return files
}

// parseTemplates parses the templates and helpers into one set, with missing keys an
// error (Helm would render them empty: a misspelt value should fail here).
func parseTemplates(t *testing.T) *template.Template {
	t.Helper()
	tpl := template.New("chart").Option("missingkey=error")
	tpl.Funcs(helmFuncs(tpl))
	all, err := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tpl.New(filepath.Base(f)).Parse(string(text)); err != nil {
			t.Fatalf("parsing %s: %v", f, err)
		}
	}
	return tpl
}

// helmFuncs are the Sprig and Helm functions the chart uses, with their semantics; a
// template calling any other fails to parse, so the chart cannot drift beyond what this
// renders.
func helmFuncs(tpl *template.Template) template.FuncMap {
	indent := func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	}
	return template.FuncMap{
		"include": func(name string, data any) (string, error) {
			var b bytes.Buffer
			err := tpl.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
		"toYaml": func(v any) (string, error) {
			b, err := yaml.Marshal(v)
			return strings.TrimSuffix(string(b), "\n"), err
		},
		"indent":  indent,
		"nindent": func(n int, s string) string { return "\n" + indent(n, s) },
		"default": func(def, v any) any {
			if v == nil || v == "" || v == false {
				return def
			}
			return v
		},
		"quote":  func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
		"list":   func(v ...any) []any { return v },
		"b64enc": func(v any) string { return base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(v))) },
	}
}

func readYAMLMap(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

// mergeValues overlays over on base, maps merged key by key as Helm's --set does.
func mergeValues(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			v = mergeValues(bm, om)
		}
		out[k] = v
	}
	return out
}
