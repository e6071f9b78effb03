package geohash

import (
	"math"
	"math/big"
)

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

// Coefficients of the series of sin (r times a series in r²) and cos:
// (-1)^k/(2k+1)! and (-1)^k/(2k)!, k = 0..14 (the rest is below 1e-33 on
// |r| <= π/4).
var sinCoef, cosCoef [15]dd

func init() {
	fact := big.NewFloat(1).SetPrec(256)
	for n := 1; n <= 29; n++ {
		fact.Mul(fact, big.NewFloat(float64(n)))
		inv := new(big.Float).SetPrec(256).Quo(big.NewFloat(1), fact)
		if (n/2)%2 == 1 {
			inv.Neg(inv)
		}
		hi, _ := inv.Float64()
		lo, _ := new(big.Float).Sub(inv, big.NewFloat(hi)).Float64()
		if n%2 == 1 {
			sinCoef[n/2] = dd{hi, lo}
		} else {
			cosCoef[n/2] = dd{hi, lo}
		}
	}
	cosCoef[0] = dd{1, 0}
}

// series returns the sum of coef[k]·x^k. The terms from k = 5 on are at
// most 3e-8 of the sum on |r| <= π/4, so they are summed in float64 (an
// error near 1e-24 of the sum) and the first five in double-double.
func series(x dd, coef *[15]dd) dd {
	t := coef[14].hi
	for k := 13; k >= 5; k-- {
		t = float64(t*x.hi) + coef[k].hi
	}
	acc := dd{t, 0}
	for k := 4; k >= 0; k-- {
		acc = acc.mul(x).add(coef[k])
	}
	return acc
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
	r2 := r.mul(r)
	if both || wantSin != odd {
		s = r.mul(series(r2, &sinCoef))
	}
	if both || wantSin == odd {
		c = series(r2, &cosCoef)
	}
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
