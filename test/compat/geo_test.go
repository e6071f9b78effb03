package compat

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"basalt/internal/testutil"
)

func TestGeo(t *testing.T) {
	p := newPair(t)

	t.Run("Sicily", func(t *testing.T) {
		// The examples of Redis's documentation.
		p.both(t, `
			GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669 "Catania"
			GEODIST Sicily Palermo Catania
			GEODIST Sicily Palermo Catania km
			GEODIST Sicily Palermo Catania MI
			GEODIST Sicily Palermo Catania ft
			GEODIST Sicily Palermo Catania M
			GEODIST Sicily Foo Bar
			GEODIST Sicily Palermo Palermo
			GEOPOS Sicily Palermo Catania NonExisting
			GEOHASH Sicily Palermo Catania NonExisting
			ZRANGE Sicily 0 -1 WITHSCORES
			TYPE Sicily
			OBJECT ENCODING Sicily
			GEORADIUS Sicily 15 37 100 km
			GEORADIUS Sicily 15 37 200 km
			GEORADIUS Sicily 15 37 200 km WITHDIST
			GEORADIUS Sicily 15 37 200 km WITHCOORD
			GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH
			GEORADIUS Sicily 15 37 200 km WITHHASH WITHCOORD DESC
			GEORADIUS_RO Sicily 15 37 200 km ASC WITHDIST
			GEOADD Sicily 13.583333 37.316667 "Agrigento"
			GEORADIUSBYMEMBER Sicily Agrigento 100 km
			GEORADIUSBYMEMBER Sicily Agrigento 100 km WITHDIST DESC
			GEORADIUSBYMEMBER_RO Sicily Palermo 300 km WITHDIST ASC COUNT 2
			GEOADD Sicily 12.758489 38.788135 "edge1" 17.241510 38.788135 "edge2"
			GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC
			GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHCOORD WITHDIST
			GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km
			GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 500 km WITHDIST WITHHASH
			GEOSEARCH Sicily FROMMEMBER Catania BYBOX 500 300 mi DESC COUNT 3 WITHDIST
			GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1000 km COUNT 2 ANY
			GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1000 km COUNT 2 ANY ASC
			GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1000 km COUNT 2
			GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 m
			GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 0 km WITHDIST
			GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 0 0 km WITHDIST
			GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC COUNT 3
			ZRANGE dst 0 -1 WITHSCORES
			GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC COUNT 3 STOREDIST
			ZRANGE dst 0 -1 WITHSCORES
			GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 1 m
			EXISTS dst
			GEORADIUS Sicily 15 37 200 km STORE dst2
			ZRANGE dst2 0 -1 WITHSCORES
			GEORADIUS Sicily 15 37 200 km STOREDIST dst2 DESC
			ZRANGE dst2 0 -1 WITHSCORES
			GEORADIUSBYMEMBER Sicily Palermo 200 km STORE dst3 COUNT 1
			ZRANGE dst3 0 -1 WITHSCORES
			GEORADIUSBYMEMBER Sicily Palermo 200 km STOREDIST dst3
			ZRANGE dst3 0 -1 WITHSCORES
			SET str x
			GEORADIUS Sicily 15 37 200 km STORE str
			TYPE str
			ZREM Sicily Palermo
			GEOPOS Sicily Palermo Catania
			ZCARD Sicily
		`)
	})

	t.Run("Add", func(t *testing.T) {
		p.both(t, `
			GEOADD k 1 2 a
			GEOADD k NX 3 4 a 5 6 b
			GEOPOS k a b
			GEOADD k XX 3 4 a 5 6 c
			GEOPOS k a c
			GEOADD k XX CH 7 8 a 5 6 c
			GEOADD k CH 7 8 a 9 10 d
			GEOADD k ch nx 7 8 a 11 12 e
			GEOADD k 7 8 a
			GEOADD k CH 7 8 a
			GEOADD k nx xx 1 1 m
			GEOADD k xx nx 1 1 m
			GEOADD k ch ch ch
			GEOADD k nx ch
			GEOADD k gt 1 1 m
			GEOADD k 1 1
			GEOADD k 1 1 m 2
			GEOADD k abc 1 m
			GEOADD k 1 abc m
			GEOADD k "" 1 m
			GEOADD k nan 1 m
			GEOADD k 181 0 m
			GEOADD k -181 0 m
			GEOADD k 0 86 m
			GEOADD k 0 -85.06 m
			GEOADD k inf 0 m
			GEOADD k 0 -inf m
			GEOADD k 1e400 0 m
			GEOADD k 180.5 90 m
			GEOADD k 1 1 ok 200 0 bad
			GEOPOS k ok
			GEOADD k 180 85.05112878 ne -180 -85.05112878 sw 180 -85.05112878 se -180 85.05112878 nw
			GEOADD k 0 0 zero -0 -0 negzero 1e-10 -1e-10 tiny 179.9999999 0 east -179.9999999 0 west
			GEOPOS k ne sw se nw zero negzero tiny east west
			GEOHASH k ne sw se nw zero negzero tiny east west
			ZRANGE k 0 -1 WITHSCORES
			GEODIST k ne sw km
			GEODIST k east west
			GEODIST k zero tiny
			GEODIST k ne nw mi
			GEODIST k a b c
			GEODIST k a b yd
			GEODIST k a b km x
			GEODIST nokey a b
			GEODIST nokey a b yd
			GEOPOS nokey a b
			GEOHASH nokey a b
			GEOPOS k
			GEOHASH k
			SET str x
			GEOADD str 1 1 m
			GEOADD str 181 1 m
			GEOPOS str m
			GEOHASH str m
			GEODIST str a b
			GEODIST str a b yd
			ZADD plain 0 z -1 neg 4503599627370495 top 4503599627370496 over 1e30 huge 3.5 frac
			GEOPOS plain z neg top over huge frac
			ZADD plain inf pinf -inf ninf 1e19 big63 2e19 big64 -1e19 nbig -1e-300 tinyneg
			GEOPOS plain pinf ninf big63 big64 nbig tinyneg
			GEOHASH plain pinf ninf big63 big64 nbig tinyneg
			GEODIST plain pinf big63
			GEOSEARCH plain FROMMEMBER pinf BYRADIUS 30000 km WITHHASH WITHCOORD
			GEOHASH plain z top frac
			GEODIST plain z top
		`)
	})

	t.Run("Errors", func(t *testing.T) {
		p.both(t, `
			GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669 "Catania"
			SET str x
			GEOSEARCH Sicily frommember Palermo
			GEOSEARCH Sicily byradius 1 km
			GEOSEARCH Sicily frommember Palermo byradius 1 km bybox 1 1 km
			GEOSEARCH Sicily bybox 1 1 km byradius 1 km frommember Palermo
			GEOSEARCH Sicily frommember Palermo fromlonlat 1 1 byradius 1 km
			GEOSEARCH Sicily fromlonlat 1 1 frommember Palermo byradius 1 km
			GEOSEARCH Sicily frommember Palermo frommember Catania byradius 100 km
			GEOSEARCH Sicily byradius 1 km byradius 200 km fromlonlat 15 37
			GEOSEARCH Sicily frommember nope byradius 1 km
			GEOSEARCH nokey frommember nope byradius 1 km
			GEOSEARCH nokey frommember nope byradius 1 km WITHDIST
			GEOSEARCH Sicily frommember Palermo byradius 1 km any
			GEOSEARCH nokey frommember x byradius 1 km any
			GEOSEARCH Sicily frommember Palermo byradius 1 km count 0
			GEOSEARCH Sicily frommember Palermo byradius 1 km count -1
			GEOSEARCH Sicily frommember Palermo byradius 1 km count x
			GEOSEARCH Sicily frommember Palermo byradius 1 km count
			GEOSEARCH Sicily frommember Palermo byradius -1 km
			GEOSEARCH Sicily frommember Palermo byradius x km
			GEOSEARCH Sicily frommember Palermo bybox x 1 km
			GEOSEARCH Sicily frommember Palermo bybox 1 x km
			GEOSEARCH Sicily frommember Palermo bybox -1 1 km
			GEOSEARCH Sicily frommember Palermo bybox 1 -1 km
			GEOSEARCH Sicily frommember Palermo byradius 1 kmx
			GEOSEARCH Sicily frommember Palermo bybox 1 1 yd
			GEOSEARCH Sicily frommember Palermo byradius 1 km storedist
			GEOSEARCH Sicily frommember Palermo byradius 1 km store x
			GEOSEARCH Sicily frommember Palermo count 10 asc
			geoSEARCH Sicily frommember Palermo count 10 asc
			GEOSEARCH Sicily byradius 1 km count 1
			GEOSEARCH Sicily asc asc count 1
			GEOSEARCH Sicily fromlonlat 181 0 byradius 1 km
			GEOSEARCH Sicily fromlonlat 1 x byradius 1 km
			GEOSEARCH nokey fromlonlat 300 1 byradius 1 km
			GEOSEARCH nokey byradius x km fromlonlat 1 1
			GEOSEARCH nokey byradius 1 km fromlonlat 1 1 foo
			GEOSEARCH str fromlonlat 1 1 byradius 1 km
			GEOSEARCH str fromlonlat 1 1 byradius 1 km foo
			GEOSEARCH Sicily fromlonlat 15 37 byradius 200 km foo
			GEOSEARCHSTORE d Sicily frommember Palermo byradius 1 km withdist
			GEOSEARCHSTORE d Sicily frommember Palermo byradius 1 km withhash
			GEOSEARCHSTORE d Sicily frommember Palermo byradius 1 km store x
			GEOSEARCHSTORE d Sicily frommember Palermo count 10
			GeoSearchStore d Sicily frommember Palermo count 10 asc
			GEOSEARCHSTORE d nokey frommember Palermo byradius 1 km
			GEOSEARCHSTORE d str frommember Palermo byradius 1 km
			GEORADIUS Sicily 15 37 200 km store d withdist
			GEORADIUS Sicily 15 37 200 km storedist d withcoord
			GEORADIUS_RO Sicily 15 37 200 km store d
			GEORADIUS_RO Sicily 15 37 200 km storedist d
			GEORADIUS Sicily 15 37 200 km store
			GEORADIUS Sicily 15 37 200 km count
			GEORADIUS Sicily 15 37 200 km count x
			GEORADIUS Sicily 15 37 200 km count 1 any withdist withhash withcoord
			GEORADIUS Sicily 15 37 200 km frommember Palermo
			GEORADIUS Sicily 15 37 200 km byradius 1 km
			GEORADIUS Sicily 15 37 200
			GEORADIUS Sicily 15 37 200 yd
			GEORADIUS Sicily 15 37 -200 km
			GEORADIUS Sicily 15 37 x km
			GEORADIUS Sicily 15 95 200 km
			GEORADIUS Sicily x 37 200 km
			GEORADIUS nokey 200 0 1 km
			GEORADIUS nokey 20 0 1 km
			GEORADIUS nokey 20 0 1 km store d
			GEORADIUS str 200 0 1 km
			GEORADIUS str 20 0 1 km store d
			GEORADIUSBYMEMBER nokey a x y
			GEORADIUSBYMEMBER nokey a x y store d
			GEORADIUSBYMEMBER nokey a x y foo
			GEORADIUSBYMEMBER Sicily nope 1 km
			GEORADIUSBYMEMBER Sicily Palermo x km
			GEORADIUSBYMEMBER Sicily Palermo 1 yd
			GEORADIUSBYMEMBER Sicily Palermo 1 km foo
			GEORADIUSBYMEMBER_RO Sicily Palermo 1 km store x
			GEORADIUSBYMEMBER str a 1 km
		`)
	})

	t.Run("Store", func(t *testing.T) {
		d := p.diff(t)
		d.Run(`
			GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669 "Catania"
			SET dst x
			GEORADIUS Sicily 15 37 1 m STORE dst
			EXISTS dst
			SET dst x
			GEORADIUS nokey 15 37 1 m STORE dst
			EXISTS dst
			SET dst x
			GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 300 km STOREDIST
			TYPE dst
			ZRANGE dst 0 -1 WITHSCORES
			GEOSEARCHSTORE Sicily Sicily FROMLONLAT 15 37 BYRADIUS 100 km
			ZRANGE Sicily 0 -1 WITHSCORES
			MULTI
			GEOADD m 1 1 a 2 2 b
			GEORADIUS m 1 1 500 km WITHDIST
			GEORADIUS m 1 1 500 km STORE m2
			GEOSEARCH m2 FROMMEMBER b BYRADIUS 500 km ASC
			EXEC
			EVAL "return redis.call('GEORADIUS', KEYS[1], 15, 37, 200, 'km', 'WITHDIST', 'WITHCOORD', 'ASC')" 1 Sicily
			EVAL "return redis.call('GEORADIUS', KEYS[1], 15, 37, 200, 'km', 'STOREDIST', KEYS[2])" 2 Sicily sd
			EVAL_RO "return redis.call('GEORADIUS_RO', KEYS[1], 15, 37, 200, 'km', 'WITHHASH')" 1 Sicily
			EVAL_RO "return redis.call('GEORADIUS', KEYS[1], 15, 37, 200, 'km')" 1 Sicily
			EVAL_RO "return redis.call('GEOPOS', KEYS[1], 'Palermo')" 1 Sicily
			EVAL_RO "return redis.call('GEODIST', KEYS[1], 'Palermo', 'Catania')" 1 Sicily
			ZRANGE sd 0 -1 WITHSCORES
			WATCH dst
			GEORADIUS Sicily 15 37 200 km STORE dst
			MULTI
			PING
			EXEC
			WATCH Sicily dst
			GEORADIUS Sicily 15 37 200 km
			GEOADD Sicily 13.361389 38.115556 "Palermo"
			MULTI
			PING
			EXEC
			WATCH Sicily
			GEOADD Sicily 13.37 38.2 "Palermo"
			MULTI
			PING
			EXEC
		`)
		// A pipeline's searches see its writes before them.
		var pipe []byte
		cmds := [][]string{
			{"GEOADD", "pipe", "1", "1", "a"},
			{"GEORADIUS", "pipe", "1", "1", "10", "km"},
			{"GEOADD", "pipe", "1.01", "1", "b"},
			{"GEORADIUSBYMEMBER", "pipe", "a", "10", "km", "ASC", "WITHDIST"},
			{"GEORADIUS", "pipe", "1", "1", "10", "km", "STORE", "pipe2"},
			{"GEOSEARCH", "pipe2", "FROMMEMBER", "b", "BYBOX", "5", "5", "km"},
		}
		for _, c := range cmds {
			pipe = append(pipe, testutil.Command(c...)...)
		}
		d.Want.Send(pipe)
		d.Got.Send(pipe)
		for _, c := range cmds {
			if err := testutil.Compare(c, d.Want.Read(), d.Got.Read()); err != nil {
				t.Error(err)
			}
		}
		// Redis's keyspace events for the STORE forms.
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			c.Do("CONFIG", "SET", "notify-keyspace-events", "KEA")
		}
		sub := p.conn(t)
		sub.Do("PSUBSCRIBE", "__keyevent@0__:*")
		d.Run(`
			GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669 "Catania"
			GEORADIUS Sicily 15 37 300 km STORE a
			GEOSEARCHSTORE b Sicily FROMLONLAT 15 37 BYRADIUS 300 km
			GEORADIUSBYMEMBER Sicily Palermo 1 m STOREDIST a
			GEORADIUS Sicily 0 0 1 m STOREDIST a
		`)
		for _, ev := range []string{"zadd", "georadiusstore", "geosearchstore", "georadiusstore", "del"} {
			want, got := sub.Want.Read(), sub.Got.Read()
			if err := testutil.Compare([]string{"event", ev}, want, got); err != nil {
				t.Error(err)
			}
		}
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			c.Do("CONFIG", "SET", "notify-keyspace-events", "")
		}
		if testutil.ClusterMode() > 1 {
			// Reads go to the leader, whose subscribers get the keymiss
			// events: not this follower's (see README).
			return
		}
		// keymiss: every form reads its source as Redis's lookupKeyRead.
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			c.Do("CONFIG", "SET", "notify-keyspace-events", "Em")
		}
		miss := p.conn(t)
		miss.Do("SUBSCRIBE", "__keyevent@0__:keymiss")
		d.Run(`
			GEOSEARCH nokey1 FROMLONLAT 1 1 BYRADIUS 1 km
			GEORADIUS nokey2 1 1 1 km
			GEORADIUS nokey3 1 1 1 km STORE d
			GEOSEARCHSTORE d nokey4 FROMLONLAT 1 1 BYRADIUS 1 km
			GEORADIUSBYMEMBER nokey5 m 1 km
			GEORADIUS_RO nokey6 1 1 1 km
			GEOPOS nokey7 m
			GEODIST nokey8 a b
			GEOHASH nokey9 m
		`)
		for i := 1; i <= 9; i++ {
			want, got := miss.Want.Read(), miss.Got.Read()
			if err := testutil.Compare([]string{"keymiss", strconv.Itoa(i)}, want, got); err != nil {
				t.Error(err)
			}
		}
		for _, c := range []*testutil.Conn{d.Want, d.Got} {
			c.Do("CONFIG", "SET", "notify-keyspace-events", "")
		}
	})

	t.Run("Random", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 2026))
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
		for _, proto := range []int{2, 3} {
			d := p.diff(t)
			if proto == 3 {
				d.Proto(3)
			}
			// A cluster around a center and points anywhere.
			clon, clat := rng.Float64()*300-150, rng.Float64()*120-60
			args := []string{"GEOADD", "pts"}
			for i := range 400 {
				var lon, lat float64
				if i < 300 {
					lon, lat = clon+rng.Float64()*4-2, clat+rng.Float64()*4-2
				} else {
					lon, lat = rng.Float64()*360-180, rng.Float64()*170-85
				}
				args = append(args, f(lon), f(lat), "m"+strconv.Itoa(i))
			}
			d.Do(args...)
			d.Do("ZCARD", "pts")
			units := []struct {
				name string
				m    float64
			}{{"m", 1}, {"km", 1000}, {"mi", 1609.34}, {"ft", 0.3048}}
			for range 40 {
				u := units[rng.IntN(len(units))]
				lon, lat := clon+rng.Float64()*4-2, clat+rng.Float64()*4-2
				if rng.IntN(5) == 0 {
					lon, lat = rng.Float64()*360-180, rng.Float64()*170-85
				}
				size := func() string { return f((1000 + rng.Float64()*300000) / u.m) }
				var from, by []string
				if rng.IntN(3) == 0 {
					from = []string{"FROMMEMBER", "m" + strconv.Itoa(rng.IntN(400))}
				} else {
					from = []string{"FROMLONLAT", f(lon), f(lat)}
				}
				if rng.IntN(2) == 0 {
					by = []string{"BYRADIUS", size(), u.name}
				} else {
					by = []string{"BYBOX", size(), size(), u.name}
				}
				search := append(append([]string{"GEOSEARCH", "pts"}, from...), by...)
				d.Do(search...)
				d.Do(append(search, "ASC", "WITHDIST")...)
				d.Do(append(search, "DESC", "WITHCOORD", "WITHHASH")...)
				n := strconv.Itoa(1 + rng.IntN(20))
				d.Do(append(search, "COUNT", n, "WITHDIST")...)
				d.Do(append(search, "COUNT", n, "DESC")...)
				d.Do(append(search, "COUNT", n, "ANY", "WITHCOORD")...)
				store := append(append(append([]string{"GEOSEARCHSTORE", "dst", "pts"}, from...), by...), "COUNT", n, "STOREDIST")
				d.Do(store...)
				d.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
				store = append(append([]string{"GEOSEARCHSTORE", "dst", "pts"}, from...), by...)
				d.Do(store...)
				d.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
				d.Do("OBJECT", "ENCODING", "dst")
				if by[0] == "BYRADIUS" {
					var radius []string
					if from[0] == "FROMMEMBER" {
						radius = []string{"GEORADIUSBYMEMBER", "pts", from[1], by[1], by[2]}
					} else {
						radius = []string{"GEORADIUS", "pts", from[1], from[2], by[1], by[2]}
					}
					d.Do(append(radius, "WITHDIST", "WITHCOORD")...)
					d.Do(append(radius, "STORE", "dst2", "DESC")...)
					d.Do("ZRANGE", "dst2", "0", "-1", "WITHSCORES")
				}
			}
			d.Do("GEOPOS", "pts", "m0", "m1", "m299", "m300", "m399")
			d.Do("GEOHASH", "pts", "m0", "m1", "m299", "m300", "m399")
			for range 20 {
				a, b := "m"+strconv.Itoa(rng.IntN(400)), "m"+strconv.Itoa(rng.IntN(400))
				d.Do("GEODIST", "pts", a, b, units[rng.IntN(len(units))].name)
			}
		}
	})

	t.Run("Limits", func(t *testing.T) {
		// Searches near the poles, the antimeridian, and huge areas, where
		// neighbour cells wrap or repeat.
		d := p.diff(t)
		args := []string{"GEOADD", "w"}
		for i, lon := range []float64{-180, -179.9, -179, -90, -1, 0, 1, 90, 179, 179.9, 180} {
			for j, lat := range []float64{-85.05112878, -85, -80, -66.5, -10, 0, 10, 66.5, 80, 85, 85.05112878} {
				args = append(args, fmt.Sprint(lon), fmt.Sprint(lat), fmt.Sprintf("p%d_%d", i, j))
			}
		}
		d.Do(args...)
		d.Run(`
			GEOSEARCH w FROMLONLAT 180 0 BYRADIUS 500 km
			GEOSEARCH w FROMLONLAT -180 0 BYRADIUS 500 km WITHDIST
			GEOSEARCH w FROMLONLAT 179.95 10 BYBOX 400 2000 km WITHDIST
			GEOSEARCH w FROMLONLAT 0 85 BYRADIUS 1000 km
			GEOSEARCH w FROMLONLAT 0 85.05112878 BYRADIUS 3000 km WITHDIST
			GEOSEARCH w FROMLONLAT 90 -85 BYBOX 5000 1000 km
			GEOSEARCH w FROMLONLAT 10 -81 BYRADIUS 800 km ASC WITHCOORD
			GEOSEARCH w FROMLONLAT 10 70 BYRADIUS 2000 km
			GEOSEARCH w FROMLONLAT 0 0 BYRADIUS 5000 km
			GEOSEARCH w FROMLONLAT 0 0 BYRADIUS 10000 km
			GEOSEARCH w FROMLONLAT 0 0 BYRADIUS 20000 km
			GEOSEARCH w FROMLONLAT 45 45 BYRADIUS 25000 km COUNT 5
			GEOSEARCH w FROMLONLAT 45 45 BYBOX 40000 40000 km
			GEOSEARCH w FROMLONLAT 0 0 BYBOX 1 1 m
			GEOSEARCH w FROMLONLAT 0 0 BYRADIUS 0 m WITHDIST
			GEOSEARCH w FROMMEMBER p5_5 BYRADIUS 1200 km WITHDIST
			GEOSEARCH w FROMMEMBER p0_0 BYRADIUS 100 km WITHCOORD
			GEOSEARCH w FROMMEMBER p10_10 BYBOX 100 100 km WITHCOORD
			GEOSEARCH w FROMMEMBER p10_10 BYRADIUS 8000 km COUNT 3 ANY
			GEORADIUS w 180 85.05112878 1000 km WITHDIST
			GEORADIUS w -180 -85.05112878 6000 km WITHDIST DESC
			GEOSEARCH w FROMLONLAT 10 10 BYRADIUS inf km COUNT 3
			GEOSEARCH w FROMLONLAT 10 10 BYRADIUS 1e300 m COUNT 3 DESC
			GEOSEARCH w FROMLONLAT 10 10 BYRADIUS -0 m WITHDIST
			GEOSEARCH w FROMLONLAT 10 10 BYRADIUS nan m
			GEOSEARCH w FROMLONLAT 10 10 BYBOX inf inf mi COUNT 3 WITHDIST
			GEOSEARCH w FROMLONLAT 10 10 BYBOX 1e300 1 ft
			GEOSEARCH w FROMLONLAT 10 10 BYBOX 0 1e300 FT
			GEOSEARCH w FROMLONLAT 10 10 BYRADIUS 5000 KM COUNT 9223372036854775807
			GEOSEARCH w FROMLONLAT 10 10 BYRADIUS 5000 Km COUNT 9223372036854775808
			GEORADIUS w 0 0 1e-300 m
			GEOADD anti 129.108236855624 74.34127156944982 p1 -108.33622139862585 -14.730218301281468 p3
			GEOSEARCH anti FROMLONLAT -50.89176446199417 -74.34127158693093 BYRADIUS 10000 km WITHDIST
			GEOSEARCH anti FROMLONLAT -50.89176446199417 -74.34127158693093 BYRADIUS 30000 km WITHDIST
			GEOSEARCH anti FROMLONLAT 71.66377812623978 14.730218979435136 BYRADIUS 5000 km WITHDIST ASC
			GEOSEARCH anti FROMLONLAT 71.66377812623978 14.730218979435136 BYRADIUS 20000 km WITHDIST ASC
			GEOSEARCH anti FROMLONLAT 71.66377812623978 14.730218979435136 BYBOX 10000 10000 km WITHDIST
			GEOSEARCH anti FROMLONLAT 71.66377812623978 14.730218979435136 BYBOX 50000 50000 km WITHDIST
		`)
	})

	t.Run("Ties", func(t *testing.T) {
		// Equal distances keep the order the scan found them in (glibc's
		// qsort is a stable merge sort).
		p.both(t, `
			GEOADD t 10 10 e 10 10 d 10 10 c 10 10 b 10 10 a 10.1 10 x 9.9 10 y 10 10.1 n 10 9.9 s
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km ASC
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km DESC WITHDIST
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km COUNT 9
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km DESC COUNT 9
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km COUNT 1 ANY
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km COUNT 3 ANY DESC
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km COUNT 3
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km COUNT 5 DESC
			GEOSEARCH t FROMLONLAT 10 10 BYRADIUS 100 km COUNT 8 WITHDIST
		`)
		// COUNT below the number found: Redis's partial quicksort, whose
		// order of equal distances the reply shows. Many members on a few
		// positions, so that most distances are equal.
		d := p.diff(t)
		rng := rand.New(rand.NewPCG(11, 12))
		args := []string{"GEOADD", "many"}
		spots := []string{"10 10", "10.5 10", "9.5 10", "10.2 10.3", "9.7 9.9", "10.01 10.01"}
		for i := range 300 {
			args = append(args, strings.Fields(spots[rng.IntN(len(spots))])...)
			args = append(args, "m"+strconv.Itoa(i))
		}
		d.Do(args...)
		for _, n := range []string{"1", "2", "7", "40", "41", "100", "299", "300"} {
			d.Do("GEOSEARCH", "many", "FROMLONLAT", "10", "10", "BYRADIUS", "300", "km", "COUNT", n)
			d.Do("GEOSEARCH", "many", "FROMLONLAT", "10", "10", "BYRADIUS", "300", "km", "COUNT", n, "DESC")
			d.Do("GEORADIUS", "many", "10", "10", "300", "km", "COUNT", n, "STOREDIST", "dst")
			d.Do("ZRANGE", "dst", "0", "-1")
		}
	})

	t.Run("Halves", func(t *testing.T) {
		// Distances whose 10000-fold rounds to a half: Redis rounds it to
		// even (llrint), not as "%.4f" would.
		p.both(t, `
			GEOADD h -126.01218312978745 -59.6329386573461 a -96.10026866197586 32.36070012812155 b 89.61428493261337 -85.04999956172352 c
			GEOSEARCH h FROMLONLAT 138.050086 -73.135238 BYRADIUS 4000000 m WITHDIST
			GEOSEARCH h FROMLONLAT -143.232298 41.504274 BYRADIUS 4300000 m WITHDIST
			GEOSEARCH h FROMLONLAT 17.490490 -33.039963 BYRADIUS 6200000 m WITHDIST
			GEOADD z 0 0 o 0.000001 0 p
			GEODIST z o p
			GEODIST z o p km
			GEODIST z o o
		`)
	})

	t.Run("CommandInfo", func(t *testing.T) {
		d := p.diff(t)
		for _, name := range []string{"geoadd", "geodist", "geohash", "geopos", "georadius", "georadius_ro",
			"georadiusbymember", "georadiusbymember_ro", "geosearch", "geosearchstore"} {
			want, got := d.DoBoth("COMMAND", "INFO", name)
			if len(got.Elems) != 1 || len(want.Elems) != 1 {
				t.Fatalf("COMMAND INFO %s: want %v, got %v", name, want, got)
			}
			sameInfoEntry(t, want.Elems[0], got.Elems[0])
		}
		d.Run(`
			COMMAND GETKEYS GEORADIUS src 1 1 1 km STORE dst
			COMMAND GETKEYS GEORADIUS src 1 1 1 km STOREDIST dst
			COMMAND GETKEYS GEORADIUSBYMEMBER src m 1 km STORE dst
			COMMAND GETKEYS GEOSEARCHSTORE dst src FROMMEMBER m BYRADIUS 1 km
		`)
	})
}
