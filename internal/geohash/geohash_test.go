package geohash

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Scores and a distance as redis-server 7.0 gives them.
func TestRedisValues(t *testing.T) {
	palermo, catania := Score(13.361389, 38.115556), Score(15.087269, 37.502669)
	if palermo != 3479099956230698 || catania != 3479447370796909 {
		t.Fatalf("scores %d %d", palermo, catania)
	}
	lon1, lat1 := DecodeScore(float64(palermo))
	lon2, lat2 := DecodeScore(float64(catania))
	if d := Distance(lon1, lat1, lon2, lat2); math.Abs(d-166274.1516) > 0.00005 {
		t.Fatalf("distance %v", d)
	}
	// The upper corner encodes one past the last cell, as in Redis.
	if s := Score(180, LatMax); s != 13510798882111488 {
		t.Fatalf("corner score %d", s)
	}
}

// A position decodes to the center of its cell, within half a cell of
// where it was.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cellLon, cellLat := 360.0/(1<<StepMax), (LatMax-LatMin)/(1<<StepMax)
	for range 100000 {
		lon := rng.Float64()*360 - 180
		lat := rng.Float64()*(LatMax-LatMin) + LatMin
		glon, glat := DecodeScore(float64(Score(lon, lat)))
		if math.Abs(glon-lon) > cellLon/2+1e-12 || math.Abs(glat-lat) > cellLat/2+1e-12 {
			t.Fatalf("%v,%v decodes to %v,%v", lon, lat, glon, glat)
		}
		if Score(glon, glat) != Score(lon, lat) {
			t.Fatalf("%v,%v: the decoded position is in another cell", lon, lat)
		}
	}
}

// The double-double functions agree with Go's math within its error (an
// ulp for sin and cos, a few for asin), and with exact identities.
func TestLibm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ulps := func(a, b float64) float64 {
		return math.Abs(a-b) / (math.Nextafter(math.Abs(b), math.Inf(1)) - math.Abs(b))
	}
	for range 100000 {
		x := rng.Float64()*7 - 3.5
		if u := ulps(sin(x), math.Sin(x)); u > 2 {
			t.Fatalf("sin(%v) = %v, math.Sin %v", x, sin(x), math.Sin(x))
		}
		if u := ulps(cos(x), math.Cos(x)); u > 2 {
			t.Fatalf("cos(%v) = %v, math.Cos %v", x, cos(x), math.Cos(x))
		}
		y := rng.Float64() * 0.9 // Go's Asin loses bits nearer 1
		if u := ulps(asin(y), math.Asin(y)); u > 3 {
			t.Fatalf("asin(%v) = %v, math.Asin %v", y, asin(y), math.Asin(y))
		}
	}
	if sin(0) != 0 || cos(0) != 1 || asin(1) != math.Pi/2 || asin(0.5) != math.Pi/6 {
		t.Fatal("identities")
	}
}

func BenchmarkDistance(b *testing.B) {
	for i := 0; b.Loop(); i++ {
		Distance(13.36, 38.11, 15.08+float64(i&1023)*1e-3, 37.5)
	}
}

// roughDistance stays within the slack beyond and within allow, antipodes
// included.
func TestRoughDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	worst := 0.0
	for i := range 200000 {
		lon1, lat1 := rng.Float64()*360-180, rng.Float64()*170-85
		lon2, lat2 := rng.Float64()*360-180, rng.Float64()*170-85
		switch i % 4 {
		case 1: // near the antipode
			lon2, lat2 = lon1-180+rng.NormFloat64()*1e-6, -lat1+rng.NormFloat64()*1e-6
		case 2: // near each other
			lon2, lat2 = lon1+rng.NormFloat64()*1e-3, lat1+rng.NormFloat64()*1e-3
		}
		d, r := Distance(lon1, lat1, lon2, lat2), roughDistance(lon1, lat1, lon2, lat2)
		if beyond(r, d) || within(r, d) {
			t.Fatalf("%v,%v %v,%v: exact %v, rough %v", lon1, lat1, lon2, lat2, d, r)
		}
		if math.IsNaN(d) != math.IsNaN(r) && r < 20e6 {
			t.Fatalf("%v,%v %v,%v: exact %v, rough %v", lon1, lat1, lon2, lat2, d, r)
		}
		if !math.IsNaN(d) && !math.IsNaN(r) {
			worst = max(worst, math.Abs(d-r))
		}
	}
	t.Logf("worst difference %g m", worst)
}
