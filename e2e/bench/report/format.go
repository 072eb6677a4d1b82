package main

import (
	"math"
	"strconv"
	"strings"
)

// none is what a cell shows when there is nothing to show.
const none = "—"

// fmtNum formats v with decimals digits after the point and a comma between thousands.
func fmtNum(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return none
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	if out := b.String(); strings.Trim(out, "0.,") == "" {
		return out // no "-0"
	}
	return sign + b.String()
}

// fmtCount formats a count, or the median of counts (which may end in .5).
func fmtCount(v float64) string {
	if v == math.Trunc(v) {
		return fmtNum(v, 0)
	}
	return fmtNum(v, 1)
}

// fmtMiB formats memory in MiB with one decimal.
func fmtMiB(v float64) string { return fmtNum(v, 1) }

// fmtSeconds formats CPU seconds.
func fmtSeconds(v float64) string { return fmtNum(v, 2) }

// fmtRatio formats a ratio of two figures.
func fmtRatio(v float64) string { return fmtNum(v, 2) }

// fmtSig formats v with about three significant digits (at least none after the point).
func fmtSig(v float64) string {
	switch a := math.Abs(v); {
	case a >= 10:
		return fmtNum(v, 0)
	case a >= 1:
		return fmtNum(v, 1)
	default:
		return fmtNum(v, 2)
	}
}

// durationUnit picks the unit of a duration in seconds: ms below one second, s above.
func durationUnit(maxSeconds float64) (scale float64, unit string) {
	if maxSeconds < 1 {
		return 1000, "ms"
	}
	return 1, "s"
}

// fmtDuration formats seconds as "109 ms" or "2.7 s".
func fmtDuration(seconds float64) string {
	scale, unit := durationUnit(seconds)
	return fmtSig(seconds*scale) + " " + unit
}

// fmtSpread formats a spread as "min / median / max" with f, or as one value when they are equal.
func fmtSpread(s spread, f func(float64) string) string {
	if s.N == 0 {
		return none
	}
	if f(s.Min) == f(s.Max) {
		return f(s.Med)
	}
	return f(s.Min) + " / " + f(s.Med) + " / " + f(s.Max)
}

// fmtDurationSpread formats a spread of seconds in one unit, chosen by its maximum: "65 / 66 / 108 ms".
func fmtDurationSpread(s spread) string {
	if s.N == 0 {
		return none
	}
	scale, unit := durationUnit(s.Max)
	return fmtSpread(s, func(v float64) string { return fmtSig(v * scale) }) + " " + unit
}

// table is a markdown table.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write appends the table to b, followed by an empty line. Cells are escaped for markdown tables.
func (t *table) write(b *strings.Builder) {
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + escapeCell(c) + " |")
		}
		b.WriteString("\n")
	}
	line(t.header)
	b.WriteString("|" + strings.Repeat("---|", len(t.header)) + "\n")
	for _, r := range t.rows {
		line(r)
	}
	b.WriteString("\n")
}

// escapeCell keeps a cell on one line and its pipes out of the table's structure.
func escapeCell(s string) string {
	if s == "" {
		return " "
	}
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// fmtMagnitude formats a figure with one decimal below 100 and none above: "15.4", "148".
func fmtMagnitude(v float64) string {
	if math.Abs(v) < 100 {
		return fmtNum(v, 1)
	}
	return fmtNum(v, 0)
}
