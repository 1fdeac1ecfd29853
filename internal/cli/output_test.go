package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestParseOutputFormat(t *testing.T) {
	tests := []struct {
		in      string
		want    outputFormat
		wantErr bool
	}{
		{"table", outputTable, false},
		{"text", outputTable, false}, // the deprecated alias
		{"json", outputJSON, false},
		{"yaml", outputYAML, false},
		{"", "", true},
		{"JSON", "", true},
		{"yml", "", true},
		{"wide", "", true},
	}
	for _, tc := range tests {
		got, err := parseOutputFormat(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("parseOutputFormat(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestWriteOutputSameFieldsInJSONAndYAML: the YAML document carries the JSON names,
// so a program can switch formats without renaming anything.
func TestWriteOutputSameFieldsInJSONAndYAML(t *testing.T) {
	type row struct {
		QueueName string `json:"queueName"`
		Pending   int    `json:"pending,omitempty"`
	}
	v := []row{{QueueName: "a", Pending: 3}, {QueueName: "b"}}
	var j, y bytes.Buffer
	if err := writeOutput(&j, outputJSON, v); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput(&y, outputYAML, v); err != nil {
		t.Fatal(err)
	}
	var fromJSON, fromYAML []map[string]any
	if err := json.Unmarshal(j.Bytes(), &fromJSON); err != nil {
		t.Fatalf("json: %v\n%s", err, j.String())
	}
	if err := yaml.Unmarshal(y.Bytes(), &fromYAML); err != nil {
		t.Fatalf("yaml: %v\n%s", err, y.String())
	}
	if len(fromYAML) != 2 || fromYAML[0]["queueName"] != "a" || fromYAML[1]["pending"] != nil {
		t.Errorf("yaml document = %v, want the json field names and omitempty honoured:\n%s", fromYAML, y.String())
	}
	if jb, _ := json.Marshal(fromJSON); !bytes.Equal(jb, mustJSON(t, fromYAML)) {
		t.Errorf("json and yaml documents differ:\n%s\n%s", j.String(), y.String())
	}
	if err := writeOutput(&j, outputTable, v); err == nil {
		t.Error("writeOutput accepted the table format, which has no generic rendering")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outputCommands are the commands that print results, each as it is typed.
var outputCommands = [][]string{
	{"validate"},
	{"simulate"},
	{"explain"},
	{"bench", "frag"},
	{"bench", "jct"},
	{"bench", "scale"},
	{"bench", "cycles"},
	{"get", "workloads"},
	{"top"},
}

// TestOneOutputVocabulary: every command that prints results has the same -o flag, with
// the same help, and refuses a wrong value with the same message naming the flag.
func TestOneOutputVocabulary(t *testing.T) {
	root := NewRootCommand(nil, &bytes.Buffer{}, &bytes.Buffer{})
	for _, path := range outputCommands {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		f := cmd.Flags().Lookup("output")
		if f == nil || f.Shorthand != "o" || f.Value.Type() != "format" || f.DefValue != "table" || f.Usage != outputHelp {
			t.Errorf("%v: -o flag = %+v; want the shared one (addOutputFlag)", path, f)
			continue
		}
		var out, errOut bytes.Buffer
		args := append(append([]string{}, path...), "-o", "xml")
		if code := Main(args, nil, &out, &errOut); code == 0 ||
			!strings.Contains(errOut.String(), `"xml" for "-o, --output" flag: "xml" is not an output format: want table, json or yaml`) {
			t.Errorf("%v: exit %d, stderr %q; want the shared refusal", args, code, errOut.String())
		}
	}
}
