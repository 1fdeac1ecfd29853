package testing

import (
	"regexp"
	"strings"
)

// TableRows reads the first text table of out whose first header cell is first
// (columns at least two spaces apart, as Gantry's tables are printed) into one map per
// row, header -> cell, keyed by the row's first cell; nil when no such table is there.
func TableRows(out, first string) map[string]map[string]string {
	sep := regexp.MustCompile(`\s{2,}`)
	var header []string
	var rows map[string]map[string]string
	for _, line := range strings.Split(out, "\n") {
		cells := sep.Split(strings.TrimSpace(line), -1)
		switch {
		case cells[0] == first:
			header, rows = cells, map[string]map[string]string{}
		case header != nil && len(cells) == len(header):
			row := map[string]string{}
			for i, h := range header {
				row[h] = cells[i]
			}
			rows[cells[0]] = row
		case header != nil:
			return rows
		}
	}
	return rows
}
