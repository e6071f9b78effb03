package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// The JSON commands have no oracle here (Debian's redis-server has no
// RedisJSON module), so these tests run basalt alone and compare with the
// replies RedisJSON 2.x documents: the examples of each command's page,
// and its RESP2 and RESP3 reply shapes. Replies are written in
// testutil.Reply's rendering: +OK, :3, "bulk", (nil), [a, b], -error.

// jsonScript runs lines of the form `command args => expected reply` on c
// (tokenized like redis-cli). Blank lines and # comments are skipped.
func jsonScript(t *testing.T, c *testutil.Conn, script string) {
	t.Helper()
	for i, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		cmd, want, ok := strings.Cut(line, " => ")
		if !ok {
			t.Fatalf("line %d: no ' => ' in %q", i+1, line)
		}
		args, err := testutil.SplitArgs(cmd)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if got := c.Do(args...).String(); got != want {
			t.Errorf("line %d: %s\n  want: %s\n  got:  %s", i+1, cmd, want, got)
		}
	}
}

func startJSON(t *testing.T) *testutil.Conn {
	t.Helper()
	return testutil.Dial(t, testutil.StartBasalt(t, "").Addr)
}

// The examples of RedisJSON's command pages, with their documented replies.
func TestJSONDocumentedExamples(t *testing.T) {
	c := startJSON(t)
	jsonScript(t, c, `
# JSON.SET
JSON.SET doc $ '{"a":2}' => +OK
JSON.SET doc $.a '3' => +OK
JSON.GET doc $ => "[{\"a\":3}]"
JSON.SET doc $ '{"a":2}' => +OK
JSON.SET doc $.b '8' => +OK
JSON.GET doc $ => "[{\"a\":2,\"b\":8}]"
JSON.SET doc $ '{"f1": {"a":1}, "f2":{"a":2}}' => +OK
JSON.SET doc $..a 3 => +OK
JSON.GET doc => "{\"f1\":{\"a\":3},\"f2\":{\"a\":3}}"
JSON.SET nonexistentkey $ 5 => +OK
JSON.GET nonexistentkey => "5"
JSON.SET nonexistentkey2 $.x 5 => -ERR new objects must be created at the root

# JSON.GET
JSON.SET doc $ '{"a":2, "b": 3, "nested": {"a": 4, "b": null}}' => +OK
JSON.GET doc $..b => "[3,null]"
JSON.GET doc INDENT "\t" NEWLINE "\n" SPACE " " $ => "[\n\t{\n\t\t\"a\": 2,\n\t\t\"b\": 3,\n\t\t\"nested\": {\n\t\t\t\"a\": 4,\n\t\t\t\"b\": null\n\t\t}\n\t}\n]"
JSON.GET nosuchkey $ => (nil)

# JSON.MGET
JSON.SET doc1 $ '{"a":1, "b": 2, "nested": {"a": 3}, "c": null}' => +OK
JSON.SET doc2 $ '{"a":4, "b": 5, "nested": {"a": 6}, "c": null}' => +OK
JSON.MGET doc1 doc2 $..a => ["[1,3]", "[4,6]"]
JSON.MGET doc1 nosuchkey doc2 .nested.a => ["3", (nil), "6"]

# JSON.DEL and JSON.FORGET
JSON.SET doc $ '{"a": 1, "nested": {"a": 2, "b": 3}}' => +OK
JSON.DEL doc $..a => :2
JSON.GET doc $ => "[{\"nested\":{\"b\":3}}]"
JSON.FORGET doc $.nested.b => :1
JSON.DEL doc $.nested.b => :0
JSON.DEL doc => :1
EXISTS doc => :0
JSON.DEL doc => :0

# JSON.TYPE
JSON.SET doc $ '{"a":2, "nested": {"a": true}, "foo": "bar"}' => +OK
JSON.TYPE doc $..foo => ["string"]
JSON.TYPE doc $..a => ["integer", "boolean"]
JSON.TYPE doc $..dummy => []
JSON.TYPE doc => "object"
JSON.TYPE doc .foo => "string"
JSON.TYPE doc .dummy => (nil)
JSON.TYPE nosuchkey => (nil)

# JSON.NUMINCRBY and JSON.NUMMULTBY
JSON.SET doc . '{"a":"b","b":[{"a":2}, {"a":5}, {"a":"c"}]}' => +OK
JSON.NUMINCRBY doc $.a 2 => "[null]"
JSON.NUMINCRBY doc $..a 2 => "[null,4,7,null]"
JSON.SET doc . '{"a":"b","b":[{"a":2}, {"a":5}, {"a":"c"}]}' => +OK
JSON.NUMMULTBY doc $.a 2 => "[null]"
JSON.NUMMULTBY doc $..a 2 => "[null,4,10,null]"
JSON.SET k1 . '{"a":[], "b":[1], "c":[1,2], "d":[1,2,3]}' => +OK
JSON.NUMINCRBY k1 $.d[*] 10 => "[11,12,13]"
JSON.NUMINCRBY k1 $.a[*] 1 => "[]"
JSON.GET k1 => "{\"a\":[],\"b\":[1],\"c\":[1,2],\"d\":[11,12,13]}"

# JSON.STRAPPEND and JSON.STRLEN
JSON.SET doc $ '{"a":"foo", "nested": {"a": "hello"}, "nested2": {"a": 31}}' => +OK
JSON.STRLEN doc $..a => [:3, :5, (nil)]
JSON.STRAPPEND doc $..a '"baz"' => [:6, :8, (nil)]
JSON.GET doc $ => "[{\"a\":\"foobaz\",\"nested\":{\"a\":\"hellobaz\"},\"nested2\":{\"a\":31}}]"
JSON.STRLEN doc .a => :6
JSON.STRAPPEND doc .a '"!"' => :7

# JSON.ARRAPPEND, JSON.ARRINDEX, JSON.ARRINSERT, JSON.ARRLEN
JSON.SET item:1 $ '{"name":"Noise-cancelling Bluetooth headphones","description":"Wireless Bluetooth headphones with noise-cancelling technology","connection":{"wireless":true,"type":"Bluetooth"},"price":99.98,"stock":25,"colors":["black","silver"]}' => +OK
JSON.ARRAPPEND item:1 $.colors '"blue"' => [:3]
JSON.GET item:1 => "{\"name\":\"Noise-cancelling Bluetooth headphones\",\"description\":\"Wireless Bluetooth headphones with noise-cancelling technology\",\"connection\":{\"wireless\":true,\"type\":\"Bluetooth\"},\"price\":99.98,\"stock\":25,\"colors\":[\"black\",\"silver\",\"blue\"]}"
JSON.ARRINDEX item:1 $..colors '"silver"' => [:1]
JSON.ARRINSERT item:1 $.colors 2 '"yellow"' '"gold"' => [:5]
JSON.GET item:1 $.colors => "[[\"black\",\"silver\",\"yellow\",\"gold\",\"blue\"]]"
JSON.ARRLEN item:1 $.colors => [:5]
JSON.ARRLEN item:1 .colors => :5
JSON.SET k1 . '[[], ["a"], ["a", "b"]]' => +OK
JSON.ARRAPPEND k1 $[*] '"c"' => [:1, :2, :3]
JSON.GET k1 => "[[\"c\"],[\"a\",\"c\"],[\"a\",\"b\",\"c\"]]"
JSON.SET k1 . '[[], ["a"], ["a", "b"]]' => +OK
JSON.ARRAPPEND k1 [-1] '"c"' => :3
JSON.GET k1 => "[[],[\"a\"],[\"a\",\"b\",\"c\"]]"
JSON.SET k1 . '[[], ["a"], ["a", "b"]]' => +OK
JSON.ARRINSERT k1 $[*] 0 '"c"' => [:1, :2, :3]
JSON.GET k1 => "[[\"c\"],[\"c\",\"a\"],[\"c\",\"a\",\"b\"]]"
JSON.SET k1 . '[[], ["a"], ["a", "b"]]' => +OK
JSON.ARRINSERT k1 . 0 '"c"' => :4
JSON.GET k1 => "[\"c\",[],[\"a\"],[\"a\",\"b\"]]"

# JSON.ARRPOP
JSON.SET key $ '[{"name":"Healthy headphones","max_level":[60,70,80]},{"name":"Noisy headphones","max_level":[85,90,100,120]}]' => +OK
JSON.ARRPOP key $.[1].max_level 0 => ["85"]
JSON.GET key $.[1].max_level => "[[90,100,120]]"
JSON.SET k1 . '[[], ["a"], ["a", "b"]]' => +OK
JSON.ARRPOP k1 $[*] => [(nil), "\"a\"", "\"b\""]
JSON.GET k1 => "[[],[],[\"a\"]]"
JSON.SET k1 . '[[], ["a"], ["a", "b"]]' => +OK
JSON.ARRPOP k1 => "[\"a\",\"b\"]"
JSON.GET k1 => "[[],[\"a\"]]"
JSON.SET k2 . '[[], ["a"], ["a", "b"]]' => +OK
JSON.ARRPOP k2 . 0 => "[]"
JSON.GET k2 => "[[\"a\"],[\"a\",\"b\"]]"

# JSON.ARRTRIM
JSON.SET key $ '[{"name":"Healthy headphones","max_level":[60,70,80]},{"name":"Noisy headphones","max_level":[85,90,100,120]}]' => +OK
JSON.ARRAPPEND key $.[1].max_level 140 160 180 200 220 240 260 280 => [:12]
JSON.ARRTRIM key $.[1].max_level 4 8 => [:5]
JSON.GET key $.[1].max_level => "[[140,160,180,200,220]]"
JSON.ARRTRIM key $.[1].max_level 10 20 => [:0]

# JSON.OBJKEYS and JSON.OBJLEN
JSON.SET doc $ '{"a":[3], "nested": {"a": {"b":2, "c": 1}}}' => +OK
JSON.OBJKEYS doc $..a => [(nil), ["b", "c"]]
JSON.OBJLEN doc $..a => [(nil), :2]
JSON.OBJKEYS doc => ["a", "nested"]
JSON.OBJLEN doc .nested => :1

# JSON.CLEAR
JSON.SET doc $ '{"obj":{"a":1, "b":2}, "arr":[1,2,3], "str": "foo", "bool": true, "int": 42, "float": 3.14}' => +OK
JSON.CLEAR doc $.* => :4
JSON.GET doc $ => "[{\"obj\":{},\"arr\":[],\"str\":\"foo\",\"bool\":true,\"int\":0,\"float\":0}]"

# JSON.TOGGLE
JSON.SET doc $ '{"bool": true}' => +OK
JSON.TOGGLE doc $.bool => [:0]
JSON.GET doc $ => "[{\"bool\":false}]"
JSON.TOGGLE doc $.bool => [:1]
JSON.TOGGLE doc .bool => "false"

# JSON.MERGE
JSON.SET doc $ '{"a":2}' => +OK
JSON.MERGE doc $.a '3' => +OK
JSON.GET doc $ => "[{\"a\":3}]"
JSON.SET doc $ '{"a":2}' => +OK
JSON.MERGE doc $.b '8' => +OK
JSON.GET doc $ => "[{\"a\":2,\"b\":8}]"
JSON.SET doc $ '{"a":2}' => +OK
JSON.MERGE doc $.a 'null' => +OK
JSON.GET doc $ => "[{}]"
JSON.SET doc $ '{"a":[2,4,6,8]}' => +OK
JSON.MERGE doc $.a '[10,12]' => +OK
JSON.GET doc $ => "[{\"a\":[10,12]}]"
JSON.SET doc $ '{"f1": {"a":1}, "f2":{"a":2}}' => +OK
JSON.GET doc => "{\"f1\":{\"a\":1},\"f2\":{\"a\":2}}"
JSON.MERGE doc $ '{"f1": null, "f2":{"a":3, "b":4}, "f3":[2,4,6]}' => +OK
JSON.GET doc => "{\"f2\":{\"a\":3,\"b\":4},\"f3\":[2,4,6]}"

# JSON.RESP (RESP2 doubles are bulk strings of %.17g, as Redis 7.0 sends
# them; the docs show 7.2's shortest form "64.99")
JSON.SET item:2 $ '{"name":"Wireless earbuds","description":"Wireless Bluetooth in-ear headphones","connection":{"wireless":true,"type":"Bluetooth"},"price":64.99,"stock":17,"colors":["black","white"], "max_level":[80, 100, 120]}' => +OK
JSON.RESP item:2 => [+"{", "name", "Wireless earbuds", "description", "Wireless Bluetooth in-ear headphones", "connection", [+"{", "wireless", +true, "type", "Bluetooth"], "price", "64.989999999999995", "stock", :17, "colors", [+"[", "black", "white"], "max_level", [+"[", :80, :100, :120]]
JSON.RESP item:2 $.colors => [[+"[", "black", "white"]]
JSON.RESP item:2 .stock => :17
`)
	// JSON.GET with several paths answers an object; RedisJSON builds it
	// in hash order, so compare it parsed.
	c.Do("JSON.SET", "doc", "$", `{"a":2, "b": 3, "nested": {"a": 4, "b": null}}`)
	jsonEqual(t, c.Do("JSON.GET", "doc", "..a", "$..b"), `{"$..b":[3,null],"..a":[2,4]}`)
	jsonEqual(t, c.Do("JSON.GET", "doc", ".a", ".nested"), `{".a":2,".nested":{"a":4,"b":null}}`)
}

// jsonEqual checks that a bulk reply holds the JSON want, whatever its
// object key order.
func jsonEqual(t *testing.T, r testutil.Reply, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(r.Str), &g); err != nil {
		t.Errorf("reply %v: %v", r, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got %s, want %s", r.Str, want)
	}
}

// Legacy paths answer for the first match and err when nothing matches;
// JSONPath answers arrays. Errors are RedisJSON's strings.
func TestJSONPathsAndErrors(t *testing.T) {
	c := startJSON(t)
	jsonScript(t, c, `
SET str x => +OK
JSON.SET str $ 1 => -WRONGTYPE Operation against a key holding the wrong kind of value
JSON.GET str => -WRONGTYPE Operation against a key holding the wrong kind of value
JSON.SET d $ '{"a":{"b":[1,2.5,"x",true,null]},"A-1":{"n":1}}' => +OK
JSON.GET d .a.b[1] => "2.5"
JSON.GET d a.b => "[1,2.5,\"x\",true,null]"
JSON.GET d $.a.b[1] => "[2.5]"
JSON.GET d "$['A-1'].n" => "[1]"
JSON.GET d '$.a.b[?(@>1)]' => "[2.5]"
JSON.GET d $.nosuch => "[]"
JSON.GET d .nosuch => -ERR Path '$.nosuch' does not exist
JSON.TYPE d $.a.b[*] => ["integer", "number", "string", "boolean", "null"]
JSON.SET d $.x '{bad' => -key must be a string at line 1 column 2
JSON.SET d $.x '' => -EOF while parsing a value at line 1 column 0
JSON.SET d $.x '1 2' => -trailing characters at line 1 column 3
JSON.SET d $.x 1 NX XX => -ERR syntax error
JSON.SET d $.x 1 XX => (nil)
JSON.SET d $.x 1 NX => +OK
JSON.SET d $.x 2 NX => (nil)
JSON.SET d $.x 2 XX => +OK
JSON.SET d $ '{}' NX => (nil)
JSON.SET nokey $ 1 XX => (nil)
JSON.SET d $.no.such 1 => (nil)
JSON.SET d $.a.b[9] 1 => -ERR array index out of range
JSON.SET d $..zz 1 => -Err wrong static path
JSON.SET n $ '{"a":{"a":1}}' => +OK
JSON.SET n $..a '{"b":2}' => +OK
JSON.GET n => "{\"a\":{\"b\":2}}"
JSON.NUMINCRBY nokey $.a 1 => -ERR could not perform this operation on a key that doesn't exist
JSON.NUMINCRBY d .a 1 => -ERR Path '$.a' does not exist or does not contains a number
JSON.NUMINCRBY d $.x abc => -expected value at line 1 column 1
JSON.NUMINCRBY d $.x '"s"' => -WRONGTYPE wrong type of path value - expected number but found string
JSON.STRAPPEND d .x '"s"' => -ERR Path '$.x' does not exist or not a string
JSON.STRLEN d .x => -WRONGTYPE wrong type of path value - expected string but found integer
JSON.ARRAPPEND d .x 1 => -ERR Path '.x' does not exist or not an array
JSON.ARRLEN d .x => -ERR Path '.x' does not exist or not an array
JSON.ARRLEN d .nosuch => -ERR Path '.nosuch' does not exist
JSON.ARRLEN nokey .x => (nil)
JSON.ARRLEN nokey $.x => -ERR could not perform this operation on a key that doesn't exist
JSON.ARRINDEX d .x 1 => -WRONGTYPE wrong type of path value - expected array but found integer
JSON.ARRINDEX d $.a.b 1 x => -Couldn't parse as integer
JSON.ARRINSERT d $.a.b 9 1 => -ERR index out of bounds
JSON.ARRPOP d .x => -ERR Path '$.x' does not exist or not an array
JSON.OBJKEYS d .x => -ERR Path '$.x' does not exist or not an object
JSON.OBJLEN d .x => -WRONGTYPE wrong type of path value - expected object but found integer
JSON.TOGGLE d .x => -ERR Path '$.x' does not exist or not a bool
JSON.GET d $[ => -JSON Path error: not terminated at 3 in $[
JSON.GET d FORMAT STRING => -ERR FORMAT argument is not supported on RESP2
JSON.GET d INDENT => -ERR wrong number of arguments for 'JSON.GET' command
JSON.MERGE nokey $.a 1 => -ERR new objects must be created at the root
`)
}

// Integers and floats stay apart: an integer plus an integer stays an
// integer, anything with a float is a float printed in shortest form.
func TestJSONNumbers(t *testing.T) {
	c := startJSON(t)
	jsonScript(t, c, `
JSON.SET n $ '{"i":1,"f":1.5,"big":9223372036854775807,"e":1e300}' => +OK
JSON.NUMINCRBY n $.i 1 => "[2]"
JSON.NUMINCRBY n $.i 0.5 => "[2.5]"
JSON.NUMINCRBY n $.f 0.5 => "[2.0]"
JSON.NUMMULTBY n $.f 3 => "[6.0]"
JSON.NUMINCRBY n .f -6 => "0.0"
JSON.NUMINCRBY n $.big 1 => "[9.223372036854776e18]"
JSON.NUMMULTBY n $.e 1e300 => -result is not a number
JSON.NUMINCRBY n $.i 0.1 => "[2.6]"
JSON.NUMINCRBY n $.i 0.1 => "[2.7]"
JSON.SET n $.s 0.1 => +OK
JSON.NUMINCRBY n $.s 0.2 => "[0.30000000000000004]"
JSON.GET n => "{\"i\":2.7,\"f\":0.0,\"big\":9.223372036854776e18,\"e\":1e300,\"s\":0.30000000000000004}"
JSON.TYPE n $.* => ["number", "number", "number", "number", "number"]
JSON.SET n $ '[1.0, 100, 1e2, 0.00001, 123456789012345678901]' => +OK
JSON.GET n => "[1.0,100,100.0,0.00001,1.2345678901234568e20]"
JSON.TYPE n $[*] => ["number", "integer", "number", "number", "number"]
JSON.ARRINDEX n $ 100 => [:1]
JSON.ARRINDEX n $ 1 => [:-1]
JSON.ARRINDEX n . 100.0 => :2
`)
}

// RESP3 reply shapes (RedisJSON 2.6): NUMINCRBY answers numbers, TYPE is
// wrapped in one more array, doubles are native.
func TestJSONRESP3(t *testing.T) {
	c := startJSON(t)
	c.Do("HELLO", "3")
	jsonScript(t, c, `
JSON.SET test_resp3 $ '{"a1":{"b":{"c":1}},"a2":{"b":{"c":2.2}},"a3":{"b":{"c":"val"}}}' => +OK
JSON.NUMINCRBY test_resp3 $.a1.b.c 1 => [:2]
JSON.NUMINCRBY test_resp3 $..c 2 => [:4, ,4.2000000000000002, (null)]
JSON.NUMINCRBY test_resp3 .a1.b.c 1 => "5"
JSON.SET t $ '{"a1":{"b":{"c":1}},"a2":{"b":{"c":true}}, "a4":[1.2,2,3.32], "c":null}' => +OK
JSON.TYPE t $.a1.b.c => [["integer"]]
JSON.TYPE t $..b => [["object", "object"]]
JSON.TYPE t $.a3 => [[]]
JSON.TYPE t $.a4[*] => [["number", "integer", "number"]]
JSON.TYPE t $..c => [["null", "integer", "boolean"]]
JSON.TYPE nosuchkey $.a1.b.c => [(null)]
JSON.GET t $.a4 => "[[1.2,2,3.32]]"
JSON.GET t FORMAT STRING $.a4 => "[[1.2,2,3.32]]"
JSON.RESP t $.a4 => [[+"[", ,1.2, :2, ,3.3199999999999998]]
JSON.ARRPOP t $.a4 => ["3.32"]
JSON.DEL t $..b => :2
JSON.MSET r1 $ '{"a":1.5}' r2 . 2 => +OK
JSON.DEBUG MEMORY r1 $.a => [:3]
JSON.DEBUG MEMORY r2 => :1
JSON.DEBUG MEMORY nosuchkey $ => []
JSON.DEBUG HELP => ["MEMORY <key> [path] - reports memory usage", "HELP                - this message"]
`)
}

// The key-space commands treat a document as one value of type ReJSON-RL.
func TestJSONKeyspace(t *testing.T) {
	c := startJSON(t)
	jsonScript(t, c, `
JSON.SET j $ '{"a":[1,2]}' => +OK
TYPE j => +ReJSON-RL
OBJECT ENCODING j => "raw"
SCAN 0 TYPE ReJSON-RL => ["0", ["j"]]
SCAN 0 TYPE string => ["0", []]
EXPIRE j 100 => :1
JSON.ARRAPPEND j $.a 3 => [:3]
JSON.SET j $.b 1 => +OK
TTL j => :100
COPY j j2 => :1
JSON.GET j2 => "{\"a\":[1,2,3],\"b\":1}"
RENAME j2 j3 => +OK
JSON.GET j3 $.a => "[[1,2,3]]"
MOVE j3 1 => :1
EXISTS j3 => :0
SELECT 1 => +OK
JSON.GET j3 .b => "1"
TYPE j3 => +ReJSON-RL
SELECT 0 => +OK
DEL j => :1
JSON.GET j => (nil)
JSON.SET j $ 1 => +OK
LPUSH j x => -WRONGTYPE Operation against a key holding the wrong kind of value
SET j x => +OK
JSON.GET j => -WRONGTYPE Operation against a key holding the wrong kind of value
`)
}

// The seat-map pattern: a document per event whose section counters are
// updated with JSON.NUMINCRBY from several clients at once. Every reply is
// a JSON array with the new value; at the end the counters add up.
func TestJSONSeatMapCounters(t *testing.T) {
	p := testutil.StartBasalt(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// go-redis speaks RESP3, where JSON.NUMINCRBY answers an array of
	// numbers; a RESP2 client gets RedisJSON's JSON text "[99]".
	rc := redis.NewClient(&redis.Options{Addr: p.Addr, PoolSize: 8})
	defer rc.Close()
	rc2 := redis.NewClient(&redis.Options{Addr: p.Addr, Protocol: 2})
	defer rc2.Close()

	const key = "event_state:{e1}"
	sections := []string{"A-1", "A-2", "B-1"}
	doc := `{"sections":{"A-1":{"stats":{"available":100,"sold":0}},"A-2":{"stats":{"available":100,"sold":0}},"B-1":{"stats":{"available":100,"sold":0}}}}`
	if err := rc.Do(ctx, "JSON.SET", key, "$", doc).Err(); err != nil {
		t.Fatal(err)
	}
	v, err := rc2.Do(ctx, "JSON.NUMINCRBY", key, "$.sections['A-1'].stats.available", -1).Text()
	if err != nil || v != "[99]" {
		t.Fatalf("NUMINCRBY (RESP2): %q %v, want [99]", v, err)
	}
	v3, err := rc.Do(ctx, "JSON.NUMINCRBY", key, "$.sections['A-1'].stats.available", 0).Result()
	if err != nil || !reflect.DeepEqual(v3, []any{int64(99)}) {
		t.Fatalf("NUMINCRBY (RESP3): %#v %v, want [99]", v3, err)
	}

	const workers, perWorker = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				s := sections[(w+i)%len(sections)]
				avail := fmt.Sprintf("$.sections['%s'].stats.available", s)
				sold := fmt.Sprintf("$.sections['%s'].stats.sold", s)
				pipe := rc.TxPipeline() // both counters of a sale move together
				a := pipe.Do(ctx, "JSON.NUMINCRBY", key, avail, -1)
				b := pipe.Do(ctx, "JSON.NUMINCRBY", key, sold, 1)
				if _, err := pipe.Exec(ctx); err != nil {
					errs <- err
					return
				}
				av, aok := a.Val().([]any)
				bv, bok := b.Val().([]any)
				if !aok || !bok || len(av) != 1 || len(bv) != 1 {
					errs <- fmt.Errorf("replies %#v %#v", a.Val(), b.Val())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	got, err := rc.Do(ctx, "JSON.GET", key, "$").Text()
	if err != nil {
		t.Fatal(err)
	}
	var out []struct {
		Sections map[string]struct {
			Stats struct{ Available, Sold int }
		}
	}
	if err := json.Unmarshal([]byte(got), &out); err != nil || len(out) != 1 {
		t.Fatalf("JSON.GET $: %q %v", got, err)
	}
	sold := 0
	for _, s := range sections {
		st := out[0].Sections[s].Stats
		extra := 0
		if s == "A-1" {
			extra = 1 // the first NUMINCRBY above
		}
		if st.Available+st.Sold+extra != 100 {
			t.Errorf("%s: available %d + sold %d do not add up", s, st.Available, st.Sold)
		}
		sold += st.Sold
	}
	if sold != workers*perWorker {
		t.Errorf("sold %d, want %d", sold, workers*perWorker)
	}
}

// JSON.MSET: the example of RedisJSON's command page, and the cases of
// RedisJSON's own tests (testMSET, testMSET_Partial, testMSET_Error): all
// triplets are checked on the documents as they were before the command,
// one error answers it and changes nothing, then the triplets apply in
// order and a triplet that finds no place to write is skipped.
func TestJSONMSet(t *testing.T) {
	c := startJSON(t)
	jsonScript(t, c, `
# The documented example
JSON.MSET doc1 $ '{"a":1}' doc2 $ '{"f":{"a":2}}' doc3 $ '{"f1":{"a":0},"f2":{"a":0}}' => +OK
JSON.MSET doc1 $ '{"a":2}' doc2 $.f.a '3' doc3 $ '{"f1":{"a":1},"f2":{"a":2}}' => +OK
JSON.GET doc1 $ => "[{\"a\":2}]"
JSON.GET doc2 $ => "[{\"f\":{\"a\":3}}]"
JSON.GET doc3 => "{\"f1\":{\"a\":1},\"f2\":{\"a\":2}}"

# A new member, a JSONPath with matches in depth, legacy paths
JSON.MSET a{s} $ '"a_val"' => +OK
JSON.GET a{s} $ => "[\"a_val\"]"
JSON.MSET a{s} $ '{"aa":"a_val"}' b{s} $ '{"bb":"b_val"}' => +OK
JSON.MGET a{s} b{s} $ => ["[{\"aa\":\"a_val\"}]", "[{\"bb\":\"b_val\"}]"]
JSON.MSET a{s} $.ab '"a_val2"' b{s} $..bb '"b_val2"' => +OK
JSON.MGET a{s} b{s} $ => ["[{\"aa\":\"a_val\",\"ab\":\"a_val2\"}]", "[{\"bb\":\"b_val2\"}]"]
JSON.MSET l . '{"n":[1,2],"o":{"p":{"q":1}}}' => +OK
JSON.MSET l .n[0] 9 l .m true l $..q '"r"' => +OK
JSON.GET l => "{\"n\":[9,2],\"o\":{\"p\":{\"q\":\"r\"}},\"m\":true}"
TYPE l => +ReJSON-RL

# A place an earlier triplet took away, or a missing parent, is skipped
JSON.SET a $ '{"x": {"y":[10,20], "z":[30,40]}}' => +OK
JSON.SET b $ '{"x": 60}' => +OK
JSON.MSET a $.x '{}' a $.x.z[1] 50 b $.x 70 => +OK
JSON.GET a $ => "[{\"x\":{}}]"
JSON.GET b $ => "[{\"x\":70}]"
JSON.SET a $ '{"x": {"y":[10,20], "z":[30,40]}}' => +OK
JSON.MSET a $.x '{}' a $.x.z[1] 50 a $.u 70 => +OK
JSON.GET a $ => "[{\"x\":{},\"u\":70}]"
JSON.MSET a $.no.such 1 b $.x 71 => +OK
JSON.GET a => "{\"x\":{},\"u\":70}"
JSON.GET b => "{\"x\":71}"

# The expiry stays, as with JSON.SET
EXPIRE b 100 => :1
JSON.MSET b $.x 72 b $ '{"y":1}' => +OK
TTL b => :100
JSON.GET b => "{\"y\":1}"
`)
}

// One error in any triplet answers JSON.MSET and leaves every key as it
// was, the earlier triplets' keys included.
func TestJSONMSetErrors(t *testing.T) {
	c := startJSON(t)
	jsonScript(t, c, `
JSON.SET a $ '"a_val"' => +OK
JSON.SET o $ '{"arr":[1]}' => +OK
SET s x => +OK
JSON.MSET => -ERR wrong number of arguments for 'json.mset' command
JSON.MSET a => -ERR wrong number of arguments for 'json.mset' command
JSON.MSET a $ => -ERR wrong number of arguments for 'json.mset' command
JSON.MSET a $ '"a_val2"' b => -ERR wrong number of arguments for 'json.mset' command
JSON.MSET a $ '"a_val2"' b $ => -ERR wrong number of arguments for 'json.mset' command
JSON.MSET a $ '"a_val2"' b $.....a '"b_val"' => -ERR new objects must be created at the root
JSON.MSET a $ '"a_val2"' s $ 1 => -WRONGTYPE Operation against a key holding the wrong kind of value
JSON.MSET a $ '"a_val2"' c $ '{bad' => -key must be a string at line 1 column 2
JSON.MSET a $ '"a_val2"' o $..zz 1 => -Err wrong static path
JSON.MSET a $ '"a_val2"' o $.arr[5] 1 => -ERR array index out of range
JSON.MSET a $ '"a_val2"' o '$[' 1 => -JSON Path error: not terminated at 3 in $[
JSON.MSET o $.arr[0] 2 nokey $.x 1 => -ERR new objects must be created at the root
# A path error comes before the value's (RedisJSON checks the path first)
JSON.MSET o $..zz '{bad' => -Err wrong static path
# The key is missing when the triplets are checked, though the first
# triplet would create it
JSON.MSET n $ '{}' n $.a 1 => -ERR new objects must be created at the root
EXISTS b c n nokey => :0
JSON.GET a $ => "[\"a_val\"]"
JSON.GET o => "{\"arr\":[1]}"
GET s => "x"
`)
}

// JSON.MSET declares every key (1, -1, 3 as RedisJSON), so COMMAND
// GETKEYS finds them and a write to any of them breaks a WATCH.
func TestJSONMSetKeys(t *testing.T) {
	b := testutil.StartBasalt(t, "")
	c := testutil.Dial(t, b.Addr)
	jsonScript(t, c, `
COMMAND GETKEYS JSON.MSET k1 $ 1 k2 $.a 2 k3 . 3 => ["k1", "k2", "k3"]
COMMAND GETKEYS JSON.MSET k1 $ 1 => ["k1"]
COMMAND GETKEYSANDFLAGS JSON.MSET k1 $ 1 k2 $ 2 => [["k1", [+RW, +update]], ["k2", [+RW, +update]]]
COMMAND GETKEYS JSON.MSET k1 $ => -ERR Invalid number of arguments specified for command
COMMAND GETKEYS JSON.DEBUG MEMORY k $ => ["k"]
COMMAND GETKEYSANDFLAGS JSON.DEBUG MEMORY k => [["k", [+RO]]]
`)
	info := c.Do("COMMAND", "INFO", "JSON.MSET", "JSON.DEBUG")
	if len(info.Elems) != 2 || len(info.Elems[0].Elems) != 10 || len(info.Elems[1].Elems) != 10 {
		t.Fatalf("COMMAND INFO: %s", info)
	}
	// name, arity, flags, first, last, step
	for i, want := range []string{
		`"json.mset" :-4 [+write, +denyoom] :1 :-1 :3`,
		`"json.debug" :-2 [+readonly] :2 :2 :1`,
	} {
		var got []string
		for _, e := range info.Elems[i].Elems[:6] {
			got = append(got, e.String())
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("COMMAND INFO: %s, want %s", g, want)
		}
	}

	// WATCH of the second key of a JSON.MSET from another client: EXEC
	// fails. A JSON.MSET that fails changes nothing: EXEC runs.
	other := testutil.Dial(t, b.Addr)
	jsonScript(t, c, `
JSON.MSET w1 $ 1 w2 $ 2 => +OK
WATCH w2 => +OK
`)
	jsonScript(t, other, `JSON.MSET w1 $ 10 w2 $ 20 => +OK`)
	jsonScript(t, c, `
MULTI => +OK
JSON.GET w2 => +QUEUED
EXEC => (nil-array)
WATCH w2 => +OK
`)
	jsonScript(t, other, `JSON.MSET w1 $ 11 w2 $.x 1 w3 $.x 1 => -ERR new objects must be created at the root`)
	jsonScript(t, c, `
MULTI => +OK
JSON.GET w2 => +QUEUED
EXEC => ["20"]
`)
}

// JSON.DEBUG MEMORY answers the size of each value's compact JSON text
// (basalt's own measure, see README; RedisJSON measures its in-memory tree
// and documents 573 for item:2), an integer for a legacy path and an array
// for a JSONPath. JSON.DEBUG HELP is RedisJSON's text.
func TestJSONDebug(t *testing.T) {
	c := startJSON(t)
	jsonScript(t, c, `
JSON.SET item:2 $ '{"name":"Wireless earbuds","description":"Wireless Bluetooth in-ear headphones","connection":{"wireless":true,"type":"Bluetooth"},"price":64.99,"stock":17,"colors":["black","white"], "max_level":[80, 100, 120]}' => +OK
JSON.DEBUG MEMORY item:2 => :207
JSON.DEBUG memory item:2 . => :207
JSON.DEBUG MEMORY item:2 $ => [:207]
JSON.DEBUG MEMORY item:2 .stock => :2
JSON.DEBUG MEMORY item:2 $.colors => [:17]
JSON.DEBUG MEMORY item:2 $..type => [:11]
JSON.DEBUG MEMORY item:2 $.* => [:18, :38, :36, :5, :2, :17, :12]
JSON.DEBUG MEMORY item:2 $.nosuch => []
JSON.DEBUG MEMORY item:2 .nosuch => -ERR Path '$.nosuch' does not exist
JSON.DEBUG MEMORY item:2 $[ => -JSON Path error: not terminated at 3 in $[
JSON.DEBUG MEMORY item:2 $ ignored => [:207]
JSON.DEBUG MEMORY nosuchkey => :0
JSON.DEBUG MEMORY nosuchkey .a => :0
JSON.DEBUG MEMORY nosuchkey $ => []
JSON.DEBUG MEMORY nosuchkey $..a => []
SET s x => +OK
JSON.DEBUG MEMORY s => -WRONGTYPE Operation against a key holding the wrong kind of value
JSON.DEBUG HELP => ["MEMORY <key> [path] - reports memory usage", "HELP                - this message"]
JSON.DEBUG help extra => ["MEMORY <key> [path] - reports memory usage", "HELP                - this message"]
JSON.DEBUG => -ERR wrong number of arguments for 'json.debug' command
JSON.DEBUG MEMORY => -ERR wrong number of arguments for 'json.debug' command
JSON.SET item:2 $.stock 1234 => +OK
JSON.DEBUG MEMORY item:2 .stock => :4
JSON.DEBUG MEMORY item:2 => :209
`)
	// (A raw string cannot hold the backquotes of this one.)
	if r := c.Do("JSON.DEBUG", "NOSUCH", "k"); r.String() != "-ERR unknown subcommand - try `JSON.DEBUG HELP`" {
		t.Errorf("JSON.DEBUG NOSUCH: %s", r)
	}
	// The whole document's measure is what JSON.GET answers, byte for byte.
	if n, doc := c.Do("JSON.DEBUG", "MEMORY", "item:2"), c.Do("JSON.GET", "item:2"); n.Int != int64(len(doc.Str)) {
		t.Errorf("JSON.DEBUG MEMORY %d, JSON.GET %d bytes", n.Int, len(doc.Str))
	}
}
