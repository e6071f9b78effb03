// Package geohash is the arithmetic of Redis's geospatial index
// (geohash.c and geohash_helper.c in Redis 7.0): positions as 52-bit
// interleaved cells, a cell's neighbours, the nine cells that cover a
// search shape, and haversine distances. Every step is done in the same
// order and precision as Redis, so that scores, decoded positions, the
// cells a search visits and the distances it finds are Redis's, bit for
// bit, but for glibc's rare misrounding of sin, cos and asin (libm.go).
package geohash

import "math"

// Limits of the index (EPSG:3785 latitudes), the precision of a stored
// position (26 bits per coordinate), and Redis's earth.
const (
	StepMax     = 26
	LatMin      = -85.05112878
	LatMax      = 85.05112878
	LonMin      = -180.0
	LonMax      = 180.0
	EarthRadius = 6372797.560856 // metres
	mercatorMax = 20037726.37
)

// pi is a variable so that dR is computed in float64 as C computes
// M_PI / 180.0, not as an exact constant.
var pi = math.Pi

var dR = pi / 180.0

func degRad(a float64) float64 { return a * dR }
func radDeg(a float64) float64 { return a / dR }

// Range is an interval of one coordinate.
type Range struct{ Min, Max float64 }

func (r Range) zero() bool { return r.Min == 0 && r.Max == 0 }

// Ranges of the stored index, and of the standard geohash (GEOHASH).
var (
	LonRange    = Range{LonMin, LonMax}
	LatRange    = Range{LatMin, LatMax}
	StdLatRange = Range{-90, 90}
)

// Bits is a cell: Step bits of each coordinate, latitude bits at the even
// positions and longitude bits at the odd ones. The zero Bits is "no
// cell" (Redis's GZERO).
type Bits struct {
	Bits uint64
	Step uint8
}

// Zero reports whether b is no cell.
func (b Bits) Zero() bool { return b.Bits == 0 && b.Step == 0 }

// Area is the extent of a cell.
type Area struct{ Lon, Lat Range }

// spread moves bit i of v to bit 2i.
func spread(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// squash is the inverse of spread: bit 2i of x to bit i (odd bits dropped).
func squash(x uint64) uint32 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return uint32(x)
}

// Encode returns the cell of step bits holding (lon, lat) within the
// ranges. It fails outside the index's limits or the ranges. A position
// on a range's upper edge gives the offset 2^step, one past the last cell,
// as in Redis (its bit lands above the cell's 2*step bits).
func Encode(lonR, latR Range, lon, lat float64, step uint8) (Bits, bool) {
	if step > 32 || step == 0 || latR.zero() || lonR.zero() {
		return Bits{}, false
	}
	if lon > LonMax || lon < LonMin || lat > LatMax || lat < LatMin {
		return Bits{}, false
	}
	if lat < latR.Min || lat > latR.Max || lon < lonR.Min || lon > lonR.Max {
		return Bits{Step: step}, false
	}
	latOff := (lat - latR.Min) / (latR.Max - latR.Min)
	lonOff := (lon - lonR.Min) / (lonR.Max - lonR.Min)
	scale := float64(uint64(1) << step)
	latOff *= scale
	lonOff *= scale
	return Bits{spread(uint32(latOff)) | spread(uint32(lonOff))<<1, step}, true
}

// EncodeWGS84 is Encode within the index's ranges.
func EncodeWGS84(lon, lat float64, step uint8) (Bits, bool) {
	return Encode(LonRange, LatRange, lon, lat, step)
}

// Decode returns the extent of cell h.
func Decode(lonR, latR Range, h Bits) (Area, bool) {
	if h.Zero() || latR.zero() || lonR.zero() {
		return Area{}, false
	}
	ilat, ilon := squash(h.Bits), squash(h.Bits>>1)
	latScale, lonScale := latR.Max-latR.Min, lonR.Max-lonR.Min
	div := float64(uint64(1) << h.Step)
	// The conversions keep each product rounded (no fused multiply-add),
	// as C computes them; ilat+1 wraps in 32 bits as in C.
	var a Area
	a.Lat.Min = latR.Min + float64(float64(float64(ilat)/div)*latScale)
	a.Lat.Max = latR.Min + float64(float64(float64(ilat+1)/div)*latScale)
	a.Lon.Min = lonR.Min + float64(float64(float64(ilon)/div)*lonScale)
	a.Lon.Max = lonR.Min + float64(float64(float64(ilon+1)/div)*lonScale)
	return a, true
}

// Center is the middle of the area, clamped to the index's limits.
func (a Area) Center() (lon, lat float64) {
	lon = (a.Lon.Min + a.Lon.Max) / 2
	lon = min(max(lon, LonMin), LonMax)
	lat = (a.Lat.Min + a.Lat.Max) / 2
	lat = min(max(lat, LatMin), LatMax)
	return lon, lat
}

// ScoreBits is C's conversion of a sorted set score to uint64 on x86-64:
// truncation, negative values wrapping, out of range values giving the
// "integer indefinite" pattern. Geo scores are integers below 2^52; this
// only matters for scores ZADD put there.
func ScoreBits(score float64) uint64 {
	const two63 = 1 << 63
	switch {
	case score < two63 && score >= -two63:
		return uint64(int64(score))
	case score >= two63 && score < 2*two63:
		return uint64(int64(score-two63)) ^ (1 << 63)
	case score >= 2*two63:
		return 0 // (indefinite) ^ bit 63
	default:
		return 1 << 63
	}
}

// DecodeScore returns the position a stored score stands for: the center
// of its cell of step 26.
func DecodeScore(score float64) (lon, lat float64) {
	a, _ := Decode(LonRange, LatRange, Bits{ScoreBits(score), StepMax})
	return a.Center()
}

// Align52 returns the score of the first position of cell h.
func Align52(h Bits) uint64 { return h.Bits << (52 - 2*uint(h.Step)) }

// Score returns the score of a position (within the index's limits).
func Score(lon, lat float64) uint64 {
	h, _ := EncodeWGS84(lon, lat, StepMax)
	return Align52(h)
}

// Longitude bits are the odd ones of an interleaved hash, latitude bits
// the even ones.
const (
	lonBits = 0xaaaaaaaaaaaaaaaa
	latBits = 0x5555555555555555
)

// move moves h one cell along the axis whose bits are mine (lonBits: east
// for d > 0, west for d < 0; latBits: north or south), wrapping around:
// the axis's bits are incremented or decremented in place, the carry
// passing over the other axis's bits, which are set for the purpose.
func move(h *Bits, d int, mine uint64) {
	if d == 0 {
		return
	}
	own, other := h.Bits&mine, h.Bits&^mine
	shift := 64 - 2*uint(h.Step)
	zz := ^mine >> shift
	if d > 0 {
		own += zz + 1
	} else {
		own |= zz
		own -= zz + 1
	}
	own &= mine >> shift
	h.Bits = own | other
}

// Neighbours of a cell, in the order Redis scans a search's cells after
// the center one.
const (
	North = iota
	South
	East
	West
	NorthEast
	NorthWest
	SouthEast
	SouthWest
)

// neighbour returns the cell next to h, dx cells east and dy north.
func neighbour(h Bits, dx, dy int) Bits {
	move(&h, dx, lonBits)
	move(&h, dy, latBits)
	return h
}

// Neighbours returns h's eight neighbours, indexed by North...SouthWest.
func Neighbours(h Bits) [8]Bits {
	return [8]Bits{
		North:     neighbour(h, 0, 1),
		South:     neighbour(h, 0, -1),
		East:      neighbour(h, 1, 0),
		West:      neighbour(h, -1, 0),
		NorthEast: neighbour(h, 1, 1),
		NorthWest: neighbour(h, -1, 1),
		SouthEast: neighbour(h, 1, -1),
		SouthWest: neighbour(h, -1, -1),
	}
}

// estimateSteps is the step whose cells are about as wide as the search
// radius (geohashEstimateStepsByRadius).
func estimateSteps(rangeMeters, lat float64) int {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2 // so that the range is within the cells in most cases
	// Cells are narrower towards the poles.
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return min(max(step, 1), 26)
}

// Shape is a search area: a circle of Radius, or a box of Width by
// Height, centered on (Lon, Lat), its sizes in a unit of Conversion
// metres.
type Shape struct {
	Lon, Lat              float64
	Box                   bool
	Radius, Width, Height float64
	Conversion            float64
}

// boundingBox returns the shape's extent in degrees (min lon, min lat,
// max lon, max lat), as geohashBoundingBox: a box's top edge is narrower
// than its bottom one in the northern hemisphere, so the wider one counts.
func (s *Shape) boundingBox() (minLon, minLat, maxLon, maxLat float64) {
	height, width := s.Conversion*s.Radius, s.Conversion*s.Radius
	if s.Box {
		height, width = s.Conversion*(s.Height/2), s.Conversion*(s.Width/2)
	}
	latDelta := radDeg(height / EarthRadius)
	top := radDeg(width / EarthRadius / cos(degRad(s.Lat+latDelta)))
	bottom := radDeg(width / EarthRadius / cos(degRad(s.Lat-latDelta)))
	delta := top
	if s.Lat < 0 {
		delta = bottom
	}
	return s.Lon - delta, s.Lat - latDelta, s.Lon + delta, s.Lat + latDelta
}

// Cells returns the cells a search of s scans, in Redis's order (the
// center cell, then its neighbours North...SouthWest), the useless ones
// zero (geohashCalculateAreasByShapeWGS84).
func (s *Shape) Cells() [9]Bits {
	minLon, minLat, maxLon, maxLat := s.boundingBox()
	radius := s.Radius
	if s.Box {
		w, h := s.Width/2, s.Height/2
		radius = math.Sqrt(float64(w*w) + float64(h*h)) // to a corner
	}
	radius *= s.Conversion
	steps := estimateSteps(radius, s.Lat)

	at := func(steps int) (Bits, [8]Bits, Area) {
		h, _ := EncodeWGS84(s.Lon, s.Lat, uint8(steps))
		a, _ := Decode(LonRange, LatRange, h)
		return h, Neighbours(h), a
	}
	hash, nb, area := at(steps)
	// The step is too fine when a side neighbour does not reach the
	// bounding box: go one coarser.
	north, _ := Decode(LonRange, LatRange, nb[North])
	south, _ := Decode(LonRange, LatRange, nb[South])
	east, _ := Decode(LonRange, LatRange, nb[East])
	west, _ := Decode(LonRange, LatRange, nb[West])
	decrease := north.Lat.Max < maxLat || south.Lat.Min > minLat || east.Lon.Max < maxLon || west.Lon.Min > minLon
	if steps > 1 && decrease {
		steps--
		hash, nb, area = at(steps)
	}
	// Leave out the neighbours beyond the bounding box.
	if steps >= 2 {
		if area.Lat.Min < minLat {
			nb[South], nb[SouthWest], nb[SouthEast] = Bits{}, Bits{}, Bits{}
		}
		if area.Lat.Max > maxLat {
			nb[North], nb[NorthEast], nb[NorthWest] = Bits{}, Bits{}, Bits{}
		}
		if area.Lon.Min < minLon {
			nb[West], nb[SouthWest], nb[NorthWest] = Bits{}, Bits{}, Bits{}
		}
		if area.Lon.Max > maxLon {
			nb[East], nb[SouthEast], nb[NorthEast] = Bits{}, Bits{}, Bits{}
		}
	}
	var cells [9]Bits
	cells[0] = hash
	copy(cells[1:], nb[:])
	return cells
}

// Distance is the haversine distance in metres between two positions in
// degrees, computed as Redis 7.0 does.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	lat1r, lon1r := degRad(lat1), degRad(lon1)
	lat2r, lon2r := degRad(lat2), degRad(lon2)
	u := sin((lat2r - lat1r) / 2)
	v := sin((lon2r - lon1r) / 2)
	a := float64(u*u) + float64(float64(float64(cos(lat1r)*cos(lat2r))*v)*v)
	return 2.0 * EarthRadius * asin(math.Sqrt(a))
}

// roughDistance is Distance with Go's math functions: off by a few ulps
// in a, the haversine, which moves the distance by less than
// roughSlack(d) (near antipodes, where asin is steep, by up to 0.4 m).
func roughDistance(lon1, lat1, lon2, lat2 float64) float64 {
	lat1r, lon1r := degRad(lat1), degRad(lon1)
	lat2r, lon2r := degRad(lat2), degRad(lon2)
	u := math.Sin((lat2r - lat1r) / 2)
	v := math.Sin((lon2r - lon1r) / 2)
	a := u*u + math.Cos(lat1r)*math.Cos(lat2r)*v*v
	return 2.0 * EarthRadius * math.Asin(math.Sqrt(a))
}

// beyond and within report whether a rough distance is surely above, or
// surely not above, limit, so that the exact one (which costs several
// times more) need not be computed to tell. Near the antipode (a rough
// distance above 20000 km) they never tell: there a, the haversine, may
// round above 1 and the exact distance be NaN, which Redis counts as
// within any radius.
func beyond(rough, limit float64) bool {
	return rough < 20e6 && rough > limit+1+limit*1e-9
}

func within(rough, limit float64) bool {
	return rough < 20e6 && rough < limit-1-limit*1e-9
}

// Contains reports whether the position (lon, lat) is within s, and its
// distance from s's center in metres. Most candidates of a search are
// outside: they are told apart with the rough distance first.
func (s *Shape) Contains(lon, lat float64) (dist float64, ok bool) {
	if !s.Box {
		limit := s.Radius * s.Conversion
		if beyond(roughDistance(s.Lon, s.Lat, lon, lat), limit) {
			return 0, false
		}
		dist = Distance(s.Lon, s.Lat, lon, lat)
		return dist, dist <= limit
	}
	halfW, halfH := s.Width*s.Conversion/2, s.Height*s.Conversion/2
	lonD, latD := roughDistance(lon, lat, s.Lon, lat), roughDistance(lon, lat, lon, s.Lat)
	if beyond(lonD, halfW) || beyond(latD, halfH) {
		return 0, false
	}
	if !within(lonD, halfW) && Distance(lon, lat, s.Lon, lat) > halfW ||
		!within(latD, halfH) && Distance(lon, lat, lon, s.Lat) > halfH {
		return 0, false
	}
	return Distance(s.Lon, s.Lat, lon, lat), true
}
