package geohash

import "math"

// Redis computes distances with glibc's sin, cos and asin, which round to
// the nearest double but for about one call in 1300, while Go's math
// package is a bit or two off in a third of its calls (measured on
// distance-like arguments). The stored distances of STOREDIST show every
// bit, so sin, cos and asin here are computed in double-double arithmetic
// (about 106 bits) and rounded once: a distance (five calls) then differs
// from Redis's in its last bit in well under 1% of cases instead of half.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) add(b dd) dd {
	s, t := twoSum(a.hi, b.hi), twoSum(a.lo, b.lo)
	s = quickTwoSum(s.hi, s.lo+t.hi)
	return quickTwoSum(s.hi, s.lo+t.lo)
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

// mul keeps its cross products rounded (float64 forbids a fused
// multiply-add), so that every architecture computes the same bits.
func (a dd) mul(b dd) dd {
	p := twoProd(a.hi, b.hi)
	return quickTwoSum(p.hi, p.lo+(float64(a.hi*b.lo)+float64(a.lo*b.hi)))
}

// divF divides by a double.
func (a dd) divF(b float64) dd {
	q1 := a.hi / b
	p := twoProd(q1, b)
	s := twoSum(a.hi, -p.hi)
	s.lo -= p.lo
	s.lo += a.lo
	return quickTwoSum(q1, (s.hi+s.lo)/b)
}

// π/2 in three parts.
var pio2 = [3]float64{
	math.Float64frombits(0x3FF921FB54442D18),
	math.Float64frombits(0x3C91A62633145C07),
	math.Float64frombits(0xB91F1976B7ED8FBC),
}

// sinCosDD returns sin x and cos x for |x| < 8 (only the one asked for
// when one is: sin when wantSin, else cos).
func sinCosDD(x dd, both, wantSin bool) (s, c dd) {
	k := math.Round(x.hi / pio2[0])
	r := x
	if k != 0 {
		r = r.add(twoProd(k, pio2[0]).neg())
		r = r.add(twoProd(k, pio2[1]).neg())
		r = r.add(dd{-k * pio2[2], 0})
	}
	// Taylor series on |r| <= π/4. Quadrants 1 and 3 swap sin and cos.
	odd := int(k)&1 == 1
	needSin := both || wantSin != odd
	needCos := both || wantSin == odd
	r2 := r.mul(r)
	term, sum := r, r
	for i := 1; i < 40 && needSin; i++ {
		term = term.mul(r2).divF(float64(2*i) * float64(2*i+1)).neg()
		sum = sum.add(term)
		if math.Abs(term.hi) < 1e-36*math.Abs(sum.hi) || term.hi == 0 {
			break
		}
	}
	s = sum
	term, sum = dd{1, 0}, dd{1, 0}
	for i := 1; i < 40 && needCos; i++ {
		term = term.mul(r2).divF(float64(2*i-1) * float64(2*i)).neg()
		sum = sum.add(term)
		if math.Abs(term.hi) < 1e-36 || term.hi == 0 {
			break
		}
	}
	c = sum
	switch int(k) & 3 {
	case 1:
		s, c = c, s.neg()
	case 2:
		s, c = s.neg(), c.neg()
	case 3:
		s, c = c.neg(), s
	}
	return s, c
}

// sin is sin x rounded to nearest.
func sin(x float64) float64 {
	if x == 0 || math.Abs(x) >= 8 || math.IsNaN(x) {
		return math.Sin(x)
	}
	s, _ := sinCosDD(dd{x, 0}, false, true)
	return s.hi
}

// cos is cos x rounded to nearest.
func cos(x float64) float64 {
	if math.Abs(x) >= 8 || math.IsNaN(x) {
		return math.Cos(x)
	}
	_, c := sinCosDD(dd{x, 0}, false, false)
	return c.hi
}

// asin is asin x rounded to nearest: a Newton step on sin from Go's value
// (good to a few bits) leaves an error near its square.
func asin(x float64) float64 {
	if x == 0 || !(math.Abs(x) < 1) {
		return math.Asin(x)
	}
	y := dd{math.Asin(x), 0}
	s, c := sinCosDD(y, true, false)
	d := dd{x, 0}.add(s.neg())
	return y.add(dd{(d.hi + d.lo) / c.hi, 0}).hi
}
