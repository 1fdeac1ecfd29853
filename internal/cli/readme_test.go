package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tourCommand is one `$ gantry ...` of the README's tour with the output printed under it.
type tourCommand struct {
	line int
	args []string
	want string
}

// readmeTour reads the console blocks of the README's tour: each command line and the
// lines under it up to the next command or the end of the block.
func readmeTour(t *testing.T) []tourCommand {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	begin, end := strings.Index(text, "<!-- TOUR:BEGIN -->"), strings.Index(text, "<!-- TOUR:END -->")
	if begin < 0 || end < begin {
		t.Fatal("README.md: no <!-- TOUR:BEGIN --> ... <!-- TOUR:END --> section")
	}
	first := strings.Count(text[:begin], "\n") + 1
	var out []tourCommand
	var cur *tourCommand
	inBlock := false
	for i, line := range strings.Split(text[begin:end], "\n") {
		switch {
		case strings.HasPrefix(line, "```console"):
			inBlock = true
		case strings.HasPrefix(line, "```"):
			inBlock, cur = false, nil
		case inBlock && strings.HasPrefix(line, "$ "):
			cur = nil
			if args, ok := strings.CutPrefix(line, "$ gantry "); ok {
				out = append(out, tourCommand{line: first + i, args: strings.Fields(args)})
				cur = &out[len(out)-1]
			}
		case inBlock && cur != nil:
			cur.want += line + "\n"
		}
	}
	return out
}

// replayable reports whether a tour command runs on what the repository holds alone:
// every path it names exists and it reads no trace or cluster (their outputs are
// measurements or need a machine; their sections say so).
func replayable(args []string) bool {
	if len(args) == 0 || args[len(args)-1] == "\\" {
		return false
	}
	switch args[0] {
	case "bench", "mig", "controller", "dashboard":
		return false
	case "node-agent":
		return false // its section shows the labels abridged, and says so
	}
	for i, a := range args {
		if a == "--events" || a == "--report" || a == "--serve" {
			return false // writes files; the section shows what they hold
		}
		if i > 0 && (args[i-1] == "-f" || args[i-1] == "--filename") {
			if _, err := os.Stat(filepath.Join("../..", a)); err != nil {
				return false
			}
		}
	}
	return true
}

// The README's tour is real: every command it shows that runs on the repository alone
// prints what the README says it prints.
func TestREADMETourIsReal(t *testing.T) {
	ran := 0
	for _, c := range readmeTour(t) {
		if !replayable(c.args) {
			continue
		}
		args := make([]string, len(c.args))
		for i, a := range c.args {
			args[i] = a
			if i > 0 && c.args[i-1] == "-f" {
				args[i] = "../../" + a
			}
		}
		var stdout, stderr bytes.Buffer
		root := NewRootCommand(strings.NewReader(""), &stdout, &stderr)
		root.SetArgs(args)
		_ = root.Execute() // a command shown failing prints its problems on stdout too
		got := strings.ReplaceAll(stdout.String(), "../../", "")
		if strings.TrimRight(got, "\n") != strings.TrimRight(c.want, "\n") {
			t.Errorf("README.md:%d: gantry %s prints\n%s\nthe README shows\n%s", c.line, strings.Join(c.args, " "), got, c.want)
		}
		ran++
	}
	if ran < 6 {
		t.Errorf("only %d tour commands replayed; the tour lost its examples", ran)
	}
}
