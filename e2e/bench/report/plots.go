package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Plot size.
const (
	plotWidth  = 16 * vg.Centimeter
	plotHeight = 9 * vg.Centimeter
)

// figure is a line plot, independent of the plotting library.
type figure struct {
	title, xLabel, yLabel string
	series                []series
	// steps draws each series as a step function (the value holds until the next point); logX puts
	// X on a logarithmic scale when every x is positive and they span a factor of 10 or more.
	steps, logX bool
	// legendLowRight puts the legend in the lower right corner instead of the upper left one.
	legendLowRight bool
}

// series is one line of a figure.
type series struct {
	name   string
	xs, ys []float64
	// lo and hi, when as long as xs, draw error bars from lo to hi.
	lo, hi []float64
	// points marks each point.
	points bool
}

// errPoints is a series' points with their error bars, for plotter.NewYErrorBars.
type errPoints struct{ s series }

func (e errPoints) Len() int                    { return len(e.s.xs) }
func (e errPoints) XY(i int) (float64, float64) { return e.s.xs[i], e.s.ys[i] }
func (e errPoints) YError(i int) (float64, float64) {
	return math.Max(0, e.s.ys[i]-e.s.lo[i]), math.Max(0, e.s.hi[i]-e.s.ys[i])
}

// png draws the figure. The plotting library panics on some inputs (a log scale over values that
// are not positive, which check excludes); a panic is returned as an error all the same.
func (f figure) png() (data []byte, err error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("plotting: %v", r)
		}
	}()
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = f.title, f.xLabel, f.yLabel
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = !f.legendLowRight, !f.legendLowRight
	p.X.Tick.Marker, p.Y.Tick.Marker = linearTicks{}, linearTicks{}
	for i, s := range f.series {
		if err := addSeries(p, i, s, f.steps); err != nil {
			return nil, fmt.Errorf("series %q: %w", s.name, err)
		}
	}
	if f.useLogX() {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if p.Y.Min > 0 {
		p.Y.Min = 0 // counts and memory read best from zero
	}
	w, err := p.WriterTo(plotWidth, plotHeight, "png")
	if err != nil {
		return nil, fmt.Errorf("plotting: %w", err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plotting: %w", err)
	}
	return buf.Bytes(), nil
}

func addSeries(p *plot.Plot, i int, s series, steps bool) error {
	xys := make(plotter.XYs, len(s.xs))
	for j := range s.xs {
		xys[j].X, xys[j].Y = s.xs[j], s.ys[j]
	}
	line, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	line.Color = plotutil.Color(i)
	line.Width = vg.Points(1.5)
	if steps {
		line.StepStyle = plotter.PostStep
	}
	p.Add(line)
	if !s.points && len(s.lo) != len(s.xs) {
		p.Legend.Add(s.name, line)
		return nil
	}
	dots, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	dots.Color = plotutil.Color(i)
	dots.Shape = plotutil.Shape(i)
	p.Add(dots)
	p.Legend.Add(s.name, line, dots)
	if len(s.lo) == len(s.xs) && len(s.hi) == len(s.xs) {
		bars, err := plotter.NewYErrorBars(errPoints{s})
		if err != nil {
			return err
		}
		bars.Color = plotutil.Color(i)
		p.Add(bars)
	}
	return nil
}

// check refuses figures the plotting library cannot draw: no series, a series with no points or
// with values that are not finite numbers.
func (f figure) check() error {
	if len(f.series) == 0 {
		return errors.New("no series")
	}
	for _, s := range f.series {
		if len(s.xs) == 0 || len(s.xs) != len(s.ys) {
			return fmt.Errorf("series %q: %d x and %d y values", s.name, len(s.xs), len(s.ys))
		}
		for _, vs := range [][]float64{s.xs, s.ys, s.lo, s.hi} {
			for _, v := range vs {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("series %q: value %v", s.name, v)
				}
			}
		}
	}
	return nil
}

// useLogX reports whether X goes on a log scale: asked for, every x positive, spanning 10× or more.
func (f figure) useLogX() bool {
	if !f.logX {
		return false
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range f.series {
		for _, x := range s.xs {
			if x <= 0 {
				return false
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	return hi >= 10*lo
}
