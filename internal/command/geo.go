package command

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"basalt/internal/geohash"
	"basalt/internal/num"
	"basalt/internal/store"
)

// Geospatial commands (geo.c in Redis 7.0). A geo set is a sorted set
// whose scores are the 52-bit geohashes of its members' positions
// (internal/geohash); GEOADD is ZADD with those scores. A search scans the
// score intervals of the nine cells that cover its shape, in Redis's
// order, so unsorted replies list members as Redis does.
func init() {
	geoCat := []string{"geo"}
	one := singleKey("geo")
	ro := []string{"RO", "access"}
	// GEORADIUS and GEORADIUSBYMEMBER write with STORE or STOREDIST, whose
	// key follows the keyword after the fixed arguments.
	radius := func(c *Command, fixed int) *Command {
		c.FirstKey, c.LastKey, c.Step, c.Group = 1, 1, 1, "geo"
		dst := []string{"OW", "update"}
		c.KeySpecs = []KeySpec{{Flags: ro, Index: 1, KeyStep: 1},
			{Flags: dst, Keyword: "STORE", StartFrom: fixed, KeyStep: 1},
			{Flags: dst, Keyword: "STOREDIST", StartFrom: fixed, KeyStep: 1}}
		return c
	}
	register(
		one(&Command{Name: "geoadd", Arity: -5, Flags: Write | DenyOOM, Categories: geoCat, Since: "3.2.0", Summary: "Add one or more geospatial items in the geospatial index represented using a sorted set", Run: cmdGeoAdd}, "RW", "update"),
		one(&Command{Name: "geodist", Arity: -4, Flags: ReadOnly, Categories: geoCat, Since: "3.2.0", Summary: "Returns the distance between two members of a geospatial index", Run: cmdGeoDist}, ro...),
		one(&Command{Name: "geohash", Arity: -2, Flags: ReadOnly, Categories: geoCat, Since: "3.2.0", Summary: "Returns members of a geospatial index as standard geohash strings", Run: cmdGeoHash}, ro...),
		one(&Command{Name: "geopos", Arity: -2, Flags: ReadOnly, Categories: geoCat, Since: "3.2.0", Summary: "Returns longitude and latitude of members of a geospatial index", Run: cmdGeoPos}, ro...),
		radius(&Command{Name: "georadius", Arity: -6, Flags: Write | DenyOOM, Categories: geoCat, Since: "3.2.0", Summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
			Run: func(c *Ctx) { geoRadiusRun(c, geoByCoords) }, ReadFirst: func(c *Ctx) bool { return geoRadiusRead(c, geoByCoords) }}, 6),
		one(&Command{Name: "georadius_ro", Arity: -6, Flags: ReadOnly, Categories: geoCat, Since: "3.2.10", Summary: "A read-only variant for GEORADIUS",
			Run: func(c *Ctx) { geoSearchGeneric(c, 1, geoByCoords|geoNoStore, false) }}, ro...),
		radius(&Command{Name: "georadiusbymember", Arity: -5, Flags: Write | DenyOOM, Categories: geoCat, Since: "3.2.0", Summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
			Run: func(c *Ctx) { geoRadiusRun(c, geoByMember) }, ReadFirst: func(c *Ctx) bool { return geoRadiusRead(c, geoByMember) }}, 5),
		one(&Command{Name: "georadiusbymember_ro", Arity: -5, Flags: ReadOnly, Categories: geoCat, Since: "3.2.10", Summary: "A read-only variant for GEORADIUSBYMEMBER",
			Run: func(c *Ctx) { geoSearchGeneric(c, 1, geoByMember|geoNoStore, false) }}, ro...),
		one(&Command{Name: "geosearch", Arity: -7, Flags: ReadOnly, Categories: geoCat, Since: "6.2.0", Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
			Run: func(c *Ctx) { geoSearchGeneric(c, 1, geoSearch, false) }}, ro...),
		&Command{Name: "geosearchstore", Arity: -8, Flags: Write | DenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Categories: geoCat, Group: "geo", Since: "6.2.0", Summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
			KeySpecs: []KeySpec{{Flags: []string{"OW", "update"}, Index: 1, KeyStep: 1}, {Flags: ro, Index: 2, KeyStep: 1}},
			Run: func(c *Ctx) {
				defer c.Tx.KeyMiss(c.Tx.KeyMiss(true)) // the source is a read (keymiss events)
				geoSearchGeneric(c, 2, geoSearch|geoSearchStore, false)
			}},
	)
}

const (
	errGeoUnit   = "ERR unsupported unit provided. please use M, KM, FT, MI"
	errGeoMember = "ERR could not decode requested zset member"
)

// geoUnit returns the metres of a unit.
func geoUnit(c *Ctx, b []byte) (float64, bool) {
	switch strings.ToLower(string(b)) {
	case "m":
		return 1, true
	case "km":
		return 1000, true
	case "ft":
		return 0.3048, true
	case "mi":
		return 1609.34, true
	}
	c.W.Error(errGeoUnit)
	return 0, false
}

// cFloatF formats f as C's "%f".
func cFloatF(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// geoLonLat parses a longitude and a latitude at args i and i+1
// (extractLongLatOrReply).
func geoLonLat(c *Ctx, i int) (lon, lat float64, ok bool) {
	if lon, ok = num.ParseFloat(c.Args[i]); ok {
		lat, ok = num.ParseFloat(c.Args[i+1])
	}
	if !ok {
		c.W.Error(ErrNotFloat)
		return 0, 0, false
	}
	if lon < geohash.LonMin || lon > geohash.LonMax || lat < geohash.LatMin || lat > geohash.LatMax {
		c.W.Error("ERR invalid longitude,latitude pair " + cFloatF(lon) + "," + cFloatF(lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// geoFloat parses a size, answering msg when it is not a number.
func geoFloat(c *Ctx, b []byte, msg string) (float64, bool) {
	f, ok := num.ParseFloat(b)
	if !ok {
		c.W.Error(msg)
	}
	return f, ok
}

// geoRadius parses "radius unit" at arg i into s.
func geoRadius(c *Ctx, i int, s *geohash.Shape) bool {
	r, ok := geoFloat(c, c.Args[i], "ERR need numeric radius")
	if !ok {
		return false
	}
	if r < 0 {
		c.W.Error("ERR radius cannot be negative")
		return false
	}
	conv, ok := geoUnit(c, c.Args[i+1])
	if ok {
		s.Box, s.Radius, s.Conversion = false, r, conv
	}
	return ok
}

// geoBox parses "width height unit" at arg i into s.
func geoBox(c *Ctx, i int, s *geohash.Shape) bool {
	w, ok := geoFloat(c, c.Args[i], "ERR need numeric width")
	if !ok {
		return false
	}
	h, ok := geoFloat(c, c.Args[i+1], "ERR need numeric height")
	if !ok {
		return false
	}
	if h < 0 || w < 0 {
		c.W.Error("ERR height or width cannot be negative")
		return false
	}
	conv, ok := geoUnit(c, c.Args[i+2])
	if ok {
		s.Box, s.Width, s.Height, s.Conversion = true, w, h, conv
	}
	return ok
}

// geoReplyCoord writes a coordinate as Redis's addReplyHumanLongDouble: a
// bulk string in RESP2, a double in RESP3, in "%.17Lf" form with the
// trailing zeros cut.
func geoReplyCoord(c *Ctx, f float64) {
	b := strconv.AppendFloat(make([]byte, 0, 32), f, 'f', 17, 64)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if string(b) == "-0" {
		b = b[1:]
	}
	if c.W.Proto >= 3 {
		c.W.Raw([]byte{','})
		c.W.Raw(b)
		c.W.Raw([]byte("\r\n"))
		return
	}
	c.W.Bulk(b)
}

// geoReplyDist writes a distance as Redis 7.0 does (fixedpoint_d2string):
// a bulk string with 4 decimals of llrint(d*10000), the product rounded
// to a double first and halves to even, so it differs from "%.4f" when
// d*10000 rounds to a half.
func geoReplyDist(c *Ctx, d float64) {
	r := math.RoundToEven(d * 10000)
	neg, u := false, uint64(0)
	switch {
	case !(r >= -(1<<63) && r < 1<<63): // llrint's invalid result, LLONG_MIN
		neg, u = true, 1<<63
	case r < 0:
		neg, u = true, uint64(-int64(r))
	default:
		u = uint64(int64(r))
	}
	b := make([]byte, 0, 24)
	if neg {
		b = append(b, '-')
	}
	digits := strconv.FormatUint(u, 10)
	for len(digits) < 5 {
		digits = "0" + digits
	}
	b = append(b, digits[:len(digits)-4]...)
	b = append(b, '.')
	b = append(b, digits[len(digits)-4:]...)
	c.W.Bulk(b)
}

// GEOADD key [NX|XX] [CH] lon lat member ... is ZADD with the positions'
// scores, as Redis rewrites it: ZADD's events, replies and options.
func cmdGeoAdd(c *Ctx) {
	idx := 2
	nx, xx := false, false
options:
	for ; idx < len(c.Args); idx++ {
		switch strings.ToLower(c.Arg(idx)) {
		case "nx":
			nx = true
		case "xx":
			xx = true
		case "ch":
		default:
			break options
		}
	}
	if (len(c.Args)-idx)%3 != 0 || (nx && xx) {
		c.W.Error(ErrSyntax)
		return
	}
	zargs := append(make([][]byte, 0, idx+(len(c.Args)-idx)/3*2), []byte("zadd"))
	zargs = append(zargs, c.Args[1:idx]...)
	for i := idx; i < len(c.Args); i += 3 {
		lon, lat, ok := geoLonLat(c, i)
		if !ok {
			return
		}
		zargs = append(zargs, num.FormatInt(int64(geohash.Score(lon, lat))), c.Args[i+2])
	}
	args := c.Args
	c.Args = zargs
	zaddGeneric(c, false)
	c.Args = args
}

// geoPosOf returns member's position.
func geoPosOf(z *zset, member []byte) (lon, lat float64, ok bool) {
	score, ok := z.score(member)
	if !ok {
		return 0, 0, false
	}
	lon, lat = geohash.DecodeScore(score)
	return lon, lat, true
}

// GEOPOS key member...
func cmdGeoPos(c *Ctx) {
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	c.W.ArrayLen(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		lon, lat, ok := geoPosOf(z, m)
		if !ok {
			c.W.NullArray()
			continue
		}
		c.W.ArrayLen(2)
		geoReplyCoord(c, lon)
		geoReplyCoord(c, lat)
	}
}

// GEODIST key member1 member2 [unit]
func cmdGeoDist(c *Ctx) {
	toMeter := 1.0
	if len(c.Args) == 5 {
		var ok bool
		if toMeter, ok = geoUnit(c, c.Args[4]); !ok {
			return
		}
	} else if len(c.Args) > 5 {
		c.W.Error(ErrSyntax)
		return
	}
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	lon1, lat1, ok1 := geoPosOf(z, c.Args[2])
	lon2, lat2, ok2 := geoPosOf(z, c.Args[3])
	if !ok1 || !ok2 {
		c.W.Null()
		return
	}
	geoReplyDist(c, geohash.Distance(lon1, lat1, lon2, lat2)/toMeter)
}

const geoAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// GEOHASH key member... gives the standard 11-character geohash of each
// position: the decoded position encoded again over latitudes -90..90 (the
// index's own cells span -85..85), its 52 bits in ten characters and a
// zero for the eleventh.
func cmdGeoHash(c *Ctx) {
	z, wrong := zsetLookup(c, c.Args[1])
	if wrong {
		return
	}
	c.W.ArrayLen(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		lon, lat, ok := geoPosOf(z, m)
		if !ok {
			c.W.Null()
			continue
		}
		h, _ := geohash.Encode(geohash.LonRange, geohash.StdLatRange, lon, lat, geohash.StepMax)
		var buf [11]byte
		for i := range 10 {
			buf[i] = geoAlphabet[(h.Bits>>(52-(i+1)*5))&0x1f]
		}
		buf[10] = geoAlphabet[0]
		c.W.Bulk(buf[:])
	}
}

// Kinds of geoSearchGeneric (Redis's RADIUS_COORDS...).
const (
	geoByCoords    = 1 << iota // GEORADIUS: lon lat radius unit
	geoByMember                // GEORADIUSBYMEMBER: member radius unit
	geoSearch                  // GEOSEARCH: FROM... BY... options
	geoNoStore                 // the _RO forms: no STORE
	geoSearchStore             // GEOSEARCHSTORE
)

// geoRadiusRun is GEORADIUS and GEORADIUSBYMEMBER on the write path.
func geoRadiusRun(c *Ctx, kind int) {
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(true)) // the source is a read (keymiss events)
	geoSearchGeneric(c, 1, kind, false)
}

// geoRadiusRead answers GEORADIUS and GEORADIUSBYMEMBER on a read view
// unless they STORE.
func geoRadiusRead(c *Ctx, kind int) bool {
	defer c.Tx.KeyMiss(c.Tx.KeyMiss(false)) // raised by geoSearchGeneric if it answers
	return geoSearchGeneric(c, 1, kind, true)
}

// geoPoint is a member a search found.
type geoPoint struct {
	member      []byte
	dist, score float64
	lon, lat    float64
}

// geoSearchGeneric is Redis's georadiusGeneric: the source key is at arg
// src. With readFirst it answers only a search that stores nothing and
// reports whether it answered.
func geoSearchGeneric(c *Ctx, src, kind int, readFirst bool) (answered bool) {
	key := c.Args[src]
	z, wrong := zsetLookup(c, key)
	if wrong {
		return true
	}
	if readFirst && !z.exists {
		defer func() {
			if answered {
				c.Tx.Notify(store.NotifyKeyMiss, "keymiss", key)
			}
		}()
	}
	var shape geohash.Shape
	var storeKey []byte
	storeDist := false
	base := 0
	switch {
	case kind&geoByCoords != 0:
		base = 6
		lon, lat, ok := geoLonLat(c, 2)
		if !ok {
			return true
		}
		shape.Lon, shape.Lat = lon, lat
		if !geoRadius(c, 4, &shape) {
			return true
		}
	case kind&geoByMember != 0:
		base = 5
		if z.exists { // a missing key answers once the options are parsed
			lon, lat, ok := geoPosOf(z, c.Args[2])
			if !ok {
				c.W.Error(errGeoMember)
				return true
			}
			shape.Lon, shape.Lat = lon, lat
			if !geoRadius(c, 3, &shape) {
				return true
			}
		}
	default:
		base = 2
		if kind&geoSearchStore != 0 {
			base = 3
			storeKey = c.Args[1]
		}
	}
	withDist, withHash, withCoord, anyOpt := false, false, false, false
	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	order := 0 // 1 ascending, -1 descending
	var count int64
	search := kind&geoSearch != 0
	for i := base; i < len(c.Args); i++ {
		left := len(c.Args) - i - 1
		switch opt := strings.ToLower(c.Arg(i)); {
		case opt == "withdist":
			withDist = true
		case opt == "withhash":
			withHash = true
		case opt == "withcoord":
			withCoord = true
		case opt == "any":
			anyOpt = true
		case opt == "asc":
			order = 1
		case opt == "desc":
			order = -1
		case opt == "count" && left >= 1:
			n, ok := num.ParseInt(c.Args[i+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return true
			}
			if n <= 0 {
				c.W.Error("ERR COUNT must be > 0")
				return true
			}
			count = n
			i++
		case (opt == "store" || opt == "storedist") && left >= 1 && kind&(geoNoStore|geoSearch) == 0:
			storeKey, storeDist = c.Args[i+1], opt == "storedist"
			i++
		case opt == "storedist" && kind&geoSearchStore != 0:
			storeDist = true
		case opt == "frommember" && left >= 1 && search && !fromLoc:
			if z.exists {
				lon, lat, ok := geoPosOf(z, c.Args[i+1])
				if !ok {
					c.W.Error(errGeoMember)
					return true
				}
				shape.Lon, shape.Lat = lon, lat
			}
			fromMember = true
			i++
		case opt == "fromlonlat" && left >= 2 && search && !fromMember:
			lon, lat, ok := geoLonLat(c, i+1)
			if !ok {
				return true
			}
			shape.Lon, shape.Lat = lon, lat
			fromLoc = true
			i += 2
		case opt == "byradius" && left >= 2 && search && !byBox:
			if !geoRadius(c, i+1, &shape) {
				return true
			}
			byRadius = true
			i += 2
		case opt == "bybox" && left >= 3 && search && !byRadius:
			if !geoBox(c, i+1, &shape) {
				return true
			}
			byBox = true
			i += 3
		default:
			c.W.Error(ErrSyntax)
			return true
		}
	}
	if storeKey != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if kind&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.W.Error("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return true
	}
	if search && !fromMember && !fromLoc {
		c.W.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + c.Arg(0))
		return true
	}
	if search && !byRadius && !byBox {
		c.W.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + c.Arg(0))
		return true
	}
	if anyOpt && count == 0 {
		c.W.Error("ERR the ANY argument requires COUNT argument")
		return true
	}
	if readFirst && storeKey != nil {
		return false
	}
	if !z.exists {
		if storeKey != nil {
			zsetStore(c, storeKey, nil, false, true, "")
			c.W.Int(0)
		} else {
			c.W.ArrayLen(0)
		}
		return true
	}
	// COUNT keeps the nearest, unless ANY.
	if count != 0 && order == 0 && !anyOpt {
		order = 1
	}
	limit := int64(0)
	if anyOpt {
		limit = count
	}
	pts := geoScan(z, &shape, limit)
	if len(pts) == 0 && storeKey == nil {
		c.W.ArrayLen(0)
		return true
	}
	if order != 0 {
		cmp := func(a, b *geoPoint) int {
			switch {
			case a.dist > b.dist:
				return order
			case a.dist < b.dist:
				return -order
			}
			return 0
		}
		if count == 0 || int64(len(pts)) <= count {
			// Redis's qsort is glibc's merge sort: stable.
			slices.SortStableFunc(pts, func(a, b geoPoint) int { return cmp(&a, &b) })
		} else {
			geoPartialSort(pts, 0, len(pts), cmp, 0, int(count)-1)
		}
	}
	if count != 0 && int64(len(pts)) > count {
		pts = pts[:count]
	}
	if storeKey != nil {
		entries := make([]zentry, len(pts))
		for i, p := range pts {
			entries[i] = zentry{p.member, p.score}
			if storeDist {
				entries[i].score = p.dist / shape.Conversion
			}
		}
		event := "georadiusstore"
		if search {
			event = "geosearchstore"
		}
		c.W.Int(zsetStore(c, storeKey, entries, false, true, event))
		return true
	}
	opts := 0
	for _, on := range []bool{withDist, withHash, withCoord} {
		if on {
			opts++
		}
	}
	c.W.ArrayLen(len(pts))
	for _, p := range pts {
		if opts > 0 {
			c.W.ArrayLen(opts + 1)
		}
		c.W.Bulk(p.member)
		if withDist {
			geoReplyDist(c, p.dist/shape.Conversion)
		}
		if withHash {
			c.W.Int(int64(p.score))
		}
		if withCoord {
			c.W.ArrayLen(2)
			geoReplyCoord(c, p.lon)
			geoReplyCoord(c, p.lat)
		}
	}
	return true
}

// geoScan returns the members within shape in the order Redis finds them
// (membersOfAllNeighbors): cell by cell, each cell's members by score,
// stopping at limit members when limit > 0.
func geoScan(z *zset, shape *geohash.Shape, limit int64) []geoPoint {
	var pts []geoPoint
	cells := shape.Cells()
	last := 0
	for i, cell := range cells {
		if cell.Zero() {
			continue
		}
		// Near a pole or with a huge radius neighbours may be the same
		// cell; Redis skips a repeat of the last cell it scanned (but
		// never compares with the center one).
		if last != 0 && cell == cells[last] {
			continue
		}
		if limit > 0 && int64(len(pts)) >= limit {
			break
		}
		lo := geohash.Align52(cell)
		cell.Bits++
		hi := geohash.Align52(cell)
		from, to := scoreRange{min: float64(lo), max: float64(hi), maxex: true}.bounds()
		z.each(from, to, false, func(m []byte, s float64) bool {
			lon, lat := geohash.DecodeScore(s)
			dist, ok := shape.Contains(lon, lat)
			if !ok {
				return true
			}
			pts = append(pts, geoPoint{member: append([]byte(nil), m...), dist: dist, score: s, lon: lon, lat: lat})
			return limit == 0 || int64(len(pts)) < limit
		})
		last = i
	}
	return pts
}

// geoPartialSort is Redis's pqsort (pqsort.c): Bentley and McIlroy's
// quicksort (without BSD's switch to insertion sort when a pass swaps
// nothing) that only recurses into the parts holding positions lo..hi,
// which it leaves as a full sort would. It is not stable, and which of
// equal elements come first is part of Redis's reply, so it is done the
// same way step by step on a[base:base+n].
func geoPartialSort(a []geoPoint, base, n int, cmp func(x, y *geoPoint) int, lo, hi int) {
	swap := func(i, j int) { a[i], a[j] = a[j], a[i] }
	insertion := func(base, n int) {
		for m := base + 1; m < base+n; m++ {
			for l := m; l > base && cmp(&a[l-1], &a[l]) > 0; l-- {
				swap(l, l-1)
			}
		}
	}
	med3 := func(i, j, k int) int {
		if cmp(&a[i], &a[j]) < 0 {
			if cmp(&a[j], &a[k]) < 0 {
				return j
			}
			if cmp(&a[i], &a[k]) < 0 {
				return k
			}
			return i
		}
		if cmp(&a[j], &a[k]) > 0 {
			return j
		}
		if cmp(&a[i], &a[k]) < 0 {
			return i
		}
		return k
	}
	vecswap := func(i, j, n int) {
		for k := range n {
			swap(i+k, j+k)
		}
	}
	// overlaps reports whether a[first..last] holds a position of lo..hi.
	overlaps := func(first, last int) bool {
		return !(lo < first && hi < first || lo > last && hi > last)
	}
	for {
		if n < 7 {
			insertion(base, n)
			return
		}
		pm := base + n/2
		if n > 7 {
			pl, pn := base, base+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(base, pm)
		pa, pb := base+1, base+1
		pc, pd := base+n-1, base+n-1
		for {
			for pb <= pc {
				r := cmp(&a[pb], &a[base])
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := cmp(&a[pc], &a[base])
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := base + n
		r := min(pa-base, pb-pa)
		vecswap(base, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		if r = pb - pa; r > 1 && overlaps(base, base+r-1) {
			geoPartialSort(a, base, r, cmp, lo, hi)
		}
		r = pd - pc
		if r <= 1 || !overlaps(pn-r, pn-1) {
			return
		}
		base, n = pn-r, r
	}
}
