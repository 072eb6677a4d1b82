package main

import (
	"math"
	"slices"
)

// percentile returns the p-th percentile (0 ≤ p ≤ 100) of values by linear interpolation between the
// closest ranks (the "R-7" definition of spreadsheets and NumPy's default), so that percentile(v, 50)
// is the median: the middle value of an odd count, the mean of the two middle values of an even one.
// ok is false when values holds no finite number. NaN and infinite values are left out.
func percentile(values []float64, p float64) (v float64, ok bool) {
	s := finiteSorted(values)
	if len(s) == 0 || math.IsNaN(p) {
		return 0, false
	}
	p = min(max(p, 0), 100)
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	return s[lo] + (s[hi]-s[lo])*(rank-float64(lo)), true
}

// median is percentile(values, 50).
func median(values []float64) (float64, bool) { return percentile(values, 50) }

// finiteSorted returns the finite values of values, sorted, in a new slice.
func finiteSorted(values []float64) []float64 {
	s := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			s = append(s, v)
		}
	}
	slices.Sort(s)
	return s
}

// spread is the minimum, median and maximum of a set of values (one per repeat, usually).
type spread struct {
	Min, Med, Max float64
	// N is how many finite values it summarizes; 0 means none (the other fields are then 0).
	N int
}

// spreadOf summarizes values.
func spreadOf(values []float64) spread {
	s := finiteSorted(values)
	if len(s) == 0 {
		return spread{}
	}
	med, _ := median(s) // s is not empty
	return spread{Min: s[0], Med: med, Max: s[len(s)-1], N: len(s)}
}
