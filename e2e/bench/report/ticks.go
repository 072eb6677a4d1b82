package main

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// maxTicks bounds the tick marks of an axis (and the loops that make them).
const maxTicks = 200

// linearTicks marks an axis at round steps (1, 2 or 5 × 10^k), about five labelled ones, with
// labels as short as the step allows.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo, 0)}}
	}
	step := niceStep((hi - lo) / 5)
	decimals := max(0, -int(math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9 && len(ticks) < maxTicks; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v, decimals)})
	}
	return ticks
}

// niceStep is the smallest of 1, 2, 5 × 10^k at least raw.
func niceStep(raw float64) float64 {
	p := math.Pow10(int(math.Floor(math.Log10(raw))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// logTicks marks a log axis at 1, 2 and 5 × 10^k, labelled, and the other integers × 10^k, not.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	var ticks []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))) && len(ticks) < maxTicks; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = tickLabel(v, max(0, -e))
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel formats a tick value with decimals digits, and thousands separated by commas.
func tickLabel(v float64, decimals int) string {
	if math.Abs(v) < 1e-12 {
		return "0"
	}
	if decimals == 0 {
		return fmtNum(v, 0)
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
