package command

import (
	"math"
	"strconv"
	"strings"

	"basalt/internal/jsondoc"
	"basalt/internal/num"
	"basalt/internal/store"
)

// JSON commands, compatible with RedisJSON 2.x (TYPE answers ReJSON-RL).
// A document is one key whose metadata body is the document serialized as
// compact JSON: documents are meant to be small (a few KB), and a command
// parses the body once, works on the tree and writes it back whole. The
// stored text is also what JSON.GET of the whole document answers, without
// parsing. Paths are JSONPath (ojg's engine, see internal/jsondoc) or
// RedisJSON's legacy syntax.
func init() {
	one := singleKey("module") // COMMAND DOCS puts module commands in group "module"
	w := func(name string, arity int, since, summary string, run func(*Ctx)) *Command {
		return one(&Command{Name: name, Arity: arity, Flags: Write | DenyOOM, Categories: []string{"write", "slow", "json"}, Since: since, Summary: summary, Run: run}, "RW", "update")
	}
	r := func(name string, arity int, since, summary string, run func(*Ctx)) *Command {
		return one(&Command{Name: name, Arity: arity, Flags: ReadOnly, Categories: []string{"read", "slow", "json"}, Since: since, Summary: summary, Run: run}, "RO", "access")
	}
	register(
		w("json.set", -4, "1.0.0", "Sets or updates the JSON value at a path", cmdJSONSet),
		// JSON.MSET's keys are every third argument, as RedisJSON declares
		// them (1, -1, 3), so WATCH, tracking and COMMAND GETKEYS see each.
		&Command{Name: "json.mset", Arity: -4, Flags: Write | DenyOOM, Categories: []string{"write", "slow", "json"}, Group: "module", Since: "2.6.0",
			Summary: "Sets or updates the JSON value of one or more keys", FirstKey: 1, LastKey: -1, Step: 3,
			KeySpecs: []KeySpec{{Flags: []string{"RW", "update"}, Index: 1, LastKey: -1, KeyStep: 3}}, Run: cmdJSONMSet},
		r("json.get", -2, "1.0.0", "Gets the value at one or more paths in JSON serialized form", cmdJSONGet),
		&Command{Name: "json.mget", Arity: -3, Flags: ReadOnly, Categories: []string{"read", "slow", "json"}, Group: "module", Since: "1.0.0", Summary: "Returns the values at a path from one or more keys", FirstKey: 1, LastKey: -2, Step: 1, Run: cmdJSONMGet},
		w("json.del", -2, "1.0.0", "Deletes a value", cmdJSONDel),
		w("json.forget", -2, "1.0.0", "Deletes a value", cmdJSONDel),
		r("json.type", -2, "1.0.0", "Returns the type of the JSON value at path", cmdJSONType),
		w("json.numincrby", 4, "1.0.0", "Increments the numeric value at path by a value", func(c *Ctx) { jsonNumOp(c, false) }),
		w("json.nummultby", 4, "1.0.0", "Multiplies the numeric value at path by a value", func(c *Ctx) { jsonNumOp(c, true) }),
		w("json.strappend", -3, "1.0.0", "Appends a string to a JSON string value at path", cmdJSONStrAppend),
		r("json.strlen", -2, "1.0.0", "Returns the length of the JSON String at path in key", cmdJSONStrLen),
		w("json.arrappend", -4, "1.0.0", "Append one or more json values into the array at path after the last element in it", cmdJSONArrAppend),
		r("json.arrindex", -4, "1.0.0", "Returns the index of the first occurrence of a JSON scalar value in the array at path", cmdJSONArrIndex),
		w("json.arrinsert", -5, "1.0.0", "Inserts the JSON scalar(s) value at the specified index in the array at path", cmdJSONArrInsert),
		r("json.arrlen", -2, "1.0.0", "Returns the length of the array at path", cmdJSONArrLen),
		w("json.arrpop", -2, "1.0.0", "Removes and returns the element at the specified index in the array at path", cmdJSONArrPop),
		w("json.arrtrim", 5, "1.0.0", "Trims the array at path to contain only the specified inclusive range of indices from start to stop", cmdJSONArrTrim),
		r("json.objkeys", -2, "1.0.0", "Returns the JSON keys of the object at path", cmdJSONObjKeys),
		r("json.objlen", -2, "1.0.0", "Returns the number of keys of the object at path", cmdJSONObjLen),
		w("json.clear", -2, "2.0.0", "Clears all values from an array or an object and sets numeric values to `0`", cmdJSONClear),
		w("json.toggle", 3, "2.0.0", "Toggles a boolean value", cmdJSONToggle),
		w("json.merge", 4, "2.6.0", "Merges a given JSON value into matching paths", cmdJSONMerge),
		r("json.resp", -2, "1.0.0", "Returns the JSON value at path in Redis Serialization Protocol (RESP)", cmdJSONResp),
		// JSON.DEBUG MEMORY key [path] | JSON.DEBUG HELP: the key is the
		// third argument (RedisJSON declares 2, 2, 1); HELP has none. Not a
		// container of subcommands: RedisJSON answers an unknown one with
		// its own error, which the server's subcommand check would replace.
		&Command{Name: "json.debug", Arity: -2, Flags: ReadOnly, Categories: []string{"read", "slow", "json"}, Group: "module", Since: "1.0.0",
			Summary: "Debugging container command", FirstKey: 2, LastKey: 2, Step: 1,
			KeySpecs: []KeySpec{{Flags: []string{"RO"}, Index: 2, KeyStep: 1}}, Run: cmdJSONDebug},
	)
}

// RedisJSON's error replies. Errors without a leading "ERR" are sent as
// RedisJSON sends them (a module's error string is the whole reply).
const (
	errJSONNoKey   = "ERR could not perform this operation on a key that doesn't exist"
	errJSONNewRoot = "ERR new objects must be created at the root"
	errJSONStatic  = "Err wrong static path"
	errJSONIndex   = "ERR array index out of range"
	errJSONBounds  = "ERR index out of bounds"
	errJSONNaN     = "result is not a number"
	errJSONInt     = "Couldn't parse as integer"
	errJSONFormat  = "ERR FORMAT argument is not supported on RESP2"
	errJSONDebug   = "ERR unknown subcommand - try `JSON.DEBUG HELP`"
	errJSONDepth   = "ERR recursion limit exceeded: the document would nest deeper than 128 levels"
)

func errPathMissing(path string) string { return "ERR Path '" + path + "' does not exist" }

func errPathMissingOr(path, or string) string {
	return "ERR Path '" + path + "' does not exist or " + or
}

func errJSONExpected(want string, v any) string {
	return "WRONGTYPE wrong type of path value - expected " + want + " but found " + jsondoc.TypeName(v)
}

// jsonKey is a key opened by a JSON command: its metadata and, once asked
// for, its parsed document.
type jsonKey struct {
	c      *Ctx
	key    []byte
	m      store.Meta
	exists bool
	doc    any
	parsed bool
}

// openJSON looks key up; on WRONGTYPE it has replied and returns false.
func openJSON(c *Ctx, key []byte) (*jsonKey, bool) {
	m, ok, wrong := c.Lookup(key, store.TypeJSON)
	if wrong {
		return nil, false
	}
	return &jsonKey{c: c, key: key, m: m, exists: ok}, true
}

// document parses the stored document (once). A write may find the tree
// in docCache instead.
func (k *jsonKey) document() any {
	if !k.parsed {
		if k.c.Tx.Writable() {
			if doc, ok := takeDoc(k.c.Tx.DB, k.key, k.m.Body); ok {
				k.doc, k.parsed = doc, true
				return doc
			}
		}
		doc, err := jsondoc.ParseStored(k.m.Body)
		if err != nil {
			panic("json: stored document does not parse: " + err.Error())
		}
		k.doc, k.parsed = doc, true
	}
	return k.doc
}

// save writes the document back and raises the command's keyspace event
// (RedisJSON's names, class d).
func (k *jsonKey) save(event string) {
	k.store()
	k.c.Tx.Notify(store.NotifyModule, event, k.key)
}

// store writes the document back, keeping the key's expiry. It is the last
// change a command makes to the tree, which docCache then keeps.
func (k *jsonKey) store() {
	body := jsondoc.Append(make([]byte, 0, len(k.m.Body)+64), k.doc, nil)
	k.c.Tx.Put(k.key, store.Meta{Type: store.TypeJSON, ExpireAt: k.m.ExpireAt, Body: body})
	putDoc(k.c.Tx.DB, k.key, body, k.doc)
}

// jsonPath parses a path argument; on error it replies and returns nil.
func jsonPath(c *Ctx, s string) *jsondoc.Path {
	p, err := jsondoc.ParsePath(s)
	if err != nil {
		c.W.Error(jsonPathError(err))
		return nil
	}
	return p
}

// jsonPathError is the reply for a path that does not parse.
func jsonPathError(err error) string {
	if err == jsondoc.ErrUTF8 {
		return err.Error()
	}
	return "JSON Path error: " + err.Error()
}

// parseJSONArg parses a JSON value argument; on error it replies.
func parseJSONArg(c *Ctx, b []byte) (any, bool) {
	v, err := jsondoc.Parse(b)
	if err != nil {
		c.W.Error(err.Error())
		return nil, false
	}
	return v, true
}

// pathArg returns argument i as a path, or the legacy root "." when absent.
func pathArg(c *Ctx, i int) string {
	if i < len(c.Args) {
		return c.Arg(i)
	}
	return "."
}

// JSON.SET key path value [NX | XX]
func cmdJSONSet(c *Ctx) {
	nx, xx := false, false
	for i := 4; i < len(c.Args); i++ {
		switch opt := c.Arg(i); {
		case strings.EqualFold(opt, "NX") && !nx && !xx:
			nx = true
		case strings.EqualFold(opt, "XX") && !nx && !xx:
			xx = true
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return
	}
	val, ok := parseJSONArg(c, c.Args[3])
	if !ok {
		return
	}
	plan, errMsg := planJSONSet(k, c.Arg(2), nx, xx)
	switch {
	case errMsg != "":
		c.W.Error(errMsg)
	case !plan.fits(val):
		c.W.Error(errJSONDepth)
	case plan.apply(k, val):
		k.save("json.set")
		c.W.OK()
	default:
		c.W.Null()
	}
}

// jsonSetPlan is where JSON.SET, or one triplet of JSON.MSET, puts its
// value. RedisJSON finds these places on the documents as they are before
// the command changes anything (so JSON.MSET checks every triplet first),
// then applies them in order.
type jsonSetPlan struct {
	root   bool          // the value replaces the whole document
	set    []jsondoc.Loc // existing values to replace
	addTo  []jsondoc.Loc // objects that get the new member addKey
	addKey string
}

// planJSONSet finds where JSON.SET would put a value at path in k, with
// its NX and XX options, or the error to answer. An empty plan changes
// nothing (JSON.SET answers nil).
func planJSONSet(k *jsonKey, path string, nx, xx bool) (jsonSetPlan, string) {
	p, err := jsondoc.ParsePath(path)
	isRoot := err == nil && p.IsRoot()
	switch {
	case !k.exists && xx, k.exists && isRoot && nx:
		return jsonSetPlan{}, ""
	case isRoot:
		return jsonSetPlan{root: true}, ""
	case !k.exists:
		return jsonSetPlan{}, errJSONNewRoot
	case err != nil:
		return jsonSetPlan{}, jsonPathError(err)
	}
	doc := k.document()
	if !nx {
		if locs := p.Locate(doc); len(locs) > 0 {
			return jsonSetPlan{set: locs}, ""
		}
		if xx {
			return jsonSetPlan{}, ""
		}
	}
	// A member that does not exist yet: only at a definite place whose
	// parent exists.
	to, key, errMsg := jsonAddPlaces(doc, p)
	return jsonSetPlan{addTo: to, addKey: key}, errMsg
}

// jsonAddPlaces finds the objects to which JSON.SET or JSON.MERGE adds the
// member p names (its parents must exist), and that member's name, or an
// error.
func jsonAddPlaces(doc any, p *jsondoc.Path) ([]jsondoc.Loc, string, string) {
	parent, last, static := p.Static()
	if !static {
		return nil, "", errJSONStatic
	}
	key, isKey := last.(string)
	if !isKey {
		// An index of an array: it exists (NX) or is out of range.
		if len(p.Locate(doc)) == 0 {
			return nil, "", errJSONIndex
		}
		return nil, "", ""
	}
	var to []jsondoc.Loc
	for _, l := range parent.Locate(doc) {
		if o, ok := jsondoc.At(doc, l).(*jsondoc.Object); ok {
			if _, exists := o.ValueForKey(key); !exists {
				to = append(to, l)
			}
		}
	}
	return to, key, ""
}

// fits reports whether val, put where the plan says, leaves the document
// within jsondoc.MaxDepth, so that it can be read back: a path can reach
// deeper than any text Parse accepts.
func (pl *jsonSetPlan) fits(val any) bool {
	at := 0 // the containers around val at its deepest place
	for _, l := range pl.set {
		at = max(at, len(l))
	}
	for _, l := range pl.addTo {
		at = max(at, len(l)+1)
	}
	return at+jsondoc.Depth(val) <= jsondoc.MaxDepth
}

// fitsIn reports whether vals, put in each array p matches in doc, leave
// it within jsondoc.MaxDepth (see jsonSetPlan.fits).
func fitsIn(doc any, p *jsondoc.Path, vals []any) bool {
	deepest := 0
	for _, v := range vals {
		deepest = max(deepest, jsondoc.Depth(v))
	}
	if deepest == 0 {
		return true // scalars nest no deeper than their array
	}
	for _, l := range p.Locate(doc) {
		if len(l)+1+deepest > jsondoc.MaxDepth {
			return false
		}
	}
	return true
}

// apply puts val where the plan says and reports whether that changed
// anything. A place that an earlier change of the same command took away
// (a parent replaced, a member added already) is skipped, as RedisJSON
// skips it. Every place after the first gets a copy of val.
func (pl *jsonSetPlan) apply(k *jsonKey, val any) bool {
	if pl.root {
		k.doc, k.parsed, k.exists = val, true, true
		return true
	}
	used := false
	next := func() any {
		if used {
			return jsondoc.Copy(val)
		}
		used = true
		return val
	}
	for _, l := range pl.set {
		if _, ok := jsondoc.Find(k.doc, l); ok {
			k.doc = jsondoc.SetAt(k.doc, l, next())
		}
	}
	for _, l := range pl.addTo {
		o, ok := jsondoc.At(k.doc, l).(*jsondoc.Object)
		if !ok {
			continue
		}
		if _, exists := o.ValueForKey(pl.addKey); !exists {
			o.SetValueForKey(pl.addKey, next())
		}
	}
	return used
}

// JSON.MSET key path value [key path value ...]: JSON.SET of each triplet
// in one command, so all or none are applied. As in RedisJSON, every
// triplet is checked first, on the documents as they were before the
// command (wrong type, a path other than the root on a missing key, a path
// error, a value that does not parse): one error answers it and changes
// nothing. Then the triplets are applied in order, each raising json.mset
// if it changed its document; a triplet that finds nowhere to put its
// value (a missing parent, or a place an earlier triplet took away) is
// skipped, and the reply is still OK.
func cmdJSONMSet(c *Ctx) {
	if (len(c.Args)-1)%3 != 0 {
		c.W.Error(WrongArity("json.mset"))
		return
	}
	type triplet struct {
		k    *jsonKey
		plan jsonSetPlan
		val  any
	}
	opened := make(map[string]*jsonKey)
	triplets := make([]triplet, 0, (len(c.Args)-1)/3)
	for i := 1; i < len(c.Args); i += 3 {
		// One jsonKey per key: triplets on the same key change one tree.
		k := opened[string(c.Args[i])]
		if k == nil {
			var ok bool
			if k, ok = openJSON(c, c.Args[i]); !ok {
				return
			}
			opened[string(c.Args[i])] = k
		}
		plan, errMsg := planJSONSet(k, c.Arg(i+1), false, false)
		if errMsg != "" {
			c.W.Error(errMsg)
			return
		}
		val, ok := parseJSONArg(c, c.Args[i+2])
		if !ok {
			return
		}
		if !plan.fits(val) {
			c.W.Error(errJSONDepth)
			return
		}
		triplets = append(triplets, triplet{k, plan, val})
	}
	var changed []*jsonKey
	seen := make(map[*jsonKey]bool)
	for _, t := range triplets {
		if !t.plan.apply(t.k, t.val) {
			continue
		}
		c.Tx.Notify(store.NotifyModule, "json.mset", t.k.key)
		if !seen[t.k] {
			seen[t.k] = true
			changed = append(changed, t.k)
		}
	}
	for _, k := range changed {
		k.store() // once per key, after its last change
	}
	c.W.OK()
}

// JSON.GET key [INDENT s] [NEWLINE s] [SPACE s] [path ...]
func cmdJSONGet(c *Ctx) {
	var f jsondoc.Format
	var paths []string
	for i := 2; i < len(c.Args); i++ {
		a := c.Arg(i)
		if len(a) > len("NOESCAPE") {
			paths = append(paths, a)
			continue
		}
		var dst *string
		switch strings.ToUpper(a) {
		case "INDENT":
			dst = &f.Indent
		case "NEWLINE":
			dst = &f.Newline
		case "SPACE":
			dst = &f.Space
		case "NOESCAPE":
			continue // accepted and ignored, as RedisJSON does
		case "FORMAT":
			if c.W.Proto < 3 && len(paths) == 0 {
				c.W.Error(errJSONFormat)
				return
			}
			if i+1 >= len(c.Args) {
				c.W.Error(WrongArity(c.Arg(0)))
				return
			}
			i++
			if !strings.EqualFold(c.Arg(i), "STRING") {
				c.W.Error("ERR FORMAT " + strings.ToUpper(c.Arg(i)) + " is not supported")
				return
			}
			continue
		default:
			paths = append(paths, a)
			continue
		}
		if i+1 >= len(c.Args) {
			c.W.Error(WrongArity(c.Arg(0)))
			return
		}
		i++
		*dst = c.Arg(i)
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return
	}
	if !k.exists {
		c.W.Null()
		return
	}
	if len(paths) == 1 {
		jsonGetOne(c, k, paths[0], &f)
		return
	}
	// Several paths: an object from each path to its value (the first
	// match for legacy paths, all matches when any path is a JSONPath).
	parsed := make([]*jsondoc.Path, 0, len(paths))
	legacy := true
	for _, s := range paths {
		p, err := jsondoc.ParsePath(s)
		if err != nil {
			continue // RedisJSON leaves a path it cannot parse out
		}
		parsed = append(parsed, p)
		legacy = legacy && p.Legacy
	}
	doc := k.document()
	out := jsondoc.NewObject()
	for _, p := range parsed {
		locs := p.Locate(doc)
		if legacy {
			if len(locs) == 0 {
				c.W.Error(errPathMissing(p.Orig))
				return
			}
			out.SetValueForKey(p.Orig, jsondoc.At(doc, locs[0]))
			continue
		}
		vals := make([]any, len(locs))
		for i, l := range locs {
			vals[i] = jsondoc.At(doc, l)
		}
		out.SetValueForKey(p.Orig, vals)
	}
	c.W.Bulk(jsondoc.Append(nil, out, &f))
}

// jsonGetOne is JSON.GET with one path: the first match for a legacy path,
// an array of the matches for a JSONPath.
func jsonGetOne(c *Ctx, k *jsonKey, path string, f *jsondoc.Format) {
	compact := f.Indent == "" && f.Newline == "" && f.Space == ""
	// The whole document is the stored text itself.
	if compact && (path == "." || path == "$") {
		if path == "." {
			c.W.Bulk(k.m.Body)
			return
		}
		buf := make([]byte, 0, len(k.m.Body)+2)
		buf = append(append(append(buf, '['), k.m.Body...), ']')
		c.W.Bulk(buf)
		return
	}
	p := jsonPath(c, path)
	if p == nil {
		return
	}
	doc := k.document()
	locs := p.Locate(doc)
	if p.Legacy {
		if len(locs) == 0 {
			c.W.Error(errPathMissing(p.Fixed))
			return
		}
		c.W.Bulk(jsondoc.Append(nil, jsondoc.At(doc, locs[0]), f))
		return
	}
	vals := make([]any, len(locs))
	for i, l := range locs {
		vals[i] = jsondoc.At(doc, l)
	}
	c.W.Bulk(jsondoc.Append(nil, vals, f))
}

// JSON.MGET key [key ...] path: one reply per key, nil for a key that is
// missing, not JSON, or lacks the (legacy) path.
func cmdJSONMGet(c *Ctx) {
	keys := c.Args[1 : len(c.Args)-1]
	p, err := jsondoc.ParsePath(c.Arg(len(c.Args) - 1))
	c.W.ArrayLen(len(keys))
	for _, key := range keys {
		m, ok := c.Tx.Lookup(key)
		if err != nil || !ok || m.Type != store.TypeJSON {
			c.W.Null()
			continue
		}
		doc, perr := jsondoc.ParseStored(m.Body)
		if perr != nil {
			panic("json: stored document does not parse: " + perr.Error())
		}
		locs := p.Locate(doc)
		if p.Legacy {
			if len(locs) == 0 {
				c.W.Null()
			} else {
				c.W.Bulk(jsondoc.Append(nil, jsondoc.At(doc, locs[0]), nil))
			}
			continue
		}
		vals := make([]any, len(locs))
		for i, l := range locs {
			vals[i] = jsondoc.At(doc, l)
		}
		c.W.Bulk(jsondoc.Marshal(vals))
	}
}

// JSON.DEL key [path] (and JSON.FORGET): the number of values deleted.
// Deleting the root deletes the key.
func cmdJSONDel(c *Ctx) {
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return
	}
	if !k.exists {
		c.W.Int(0)
		return
	}
	p := jsonPath(c, pathArg(c, 2))
	if p == nil {
		return
	}
	if p.IsRoot() {
		c.Tx.Delete(k.key)
		c.Tx.Notify(store.NotifyModule, "json.del", k.key)
		c.W.Int(1)
		return
	}
	deleted := int64(0)
	for _, l := range jsondoc.ForDeletion(p.Locate(k.document())) {
		if len(l) == 0 {
			c.Tx.Delete(k.key)
			c.Tx.Notify(store.NotifyModule, "json.del", k.key)
			c.W.Int(1)
			return
		}
		k.doc = jsondoc.RemoveAt(k.doc, l)
		deleted++
	}
	if deleted > 0 {
		k.save("json.del")
	}
	c.W.Int(deleted)
}

// jsonRead opens the key of a read command and parses its path. missing
// answers a missing key (legacy and JSONPath may differ), before the path
// is parsed; it returns ok=false when it has replied.
func jsonRead(c *Ctx, missing func(legacy bool)) (*jsonKey, *jsondoc.Path, bool) {
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return nil, nil, false
	}
	path := pathArg(c, 2)
	if !k.exists {
		missing(len(path) == 0 || path[0] != '$')
		return nil, nil, false
	}
	p := jsonPath(c, path)
	if p == nil {
		return nil, nil, false
	}
	return k, p, true
}

// first returns the first value p matches in doc.
func first(doc any, p *jsondoc.Path) (any, bool) {
	locs := p.Locate(doc)
	if len(locs) == 0 {
		return nil, false
	}
	return jsondoc.At(doc, locs[0]), true
}

// matches returns every value p matches in doc.
func matches(doc any, p *jsondoc.Path) []any {
	locs := p.Locate(doc)
	vals := make([]any, len(locs))
	for i, l := range locs {
		vals[i] = jsondoc.At(doc, l)
	}
	return vals
}

// JSON.TYPE key [path]. In RESP3 the reply is wrapped in one more array,
// as RedisJSON 2.6 does.
func cmdJSONType(c *Ctx) {
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return
	}
	path := pathArg(c, 2)
	p, err := jsondoc.ParsePath(path)
	if err != nil && len(path) > 0 && path[0] == '$' {
		c.W.Error(jsonPathError(err))
		return // a legacy path that does not parse answers nil
	}
	if c.W.Proto >= 3 {
		c.W.ArrayLen(1)
	}
	if !k.exists || err != nil {
		c.W.Null()
		return
	}
	doc := k.document()
	if p.Legacy {
		if v, ok := first(doc, p); ok {
			c.W.BulkString(jsondoc.TypeName(v))
		} else {
			c.W.Null()
		}
		return
	}
	vals := matches(doc, p)
	c.W.ArrayLen(len(vals))
	for _, v := range vals {
		c.W.BulkString(jsondoc.TypeName(v))
	}
}

// jsonWrite opens the key of a write command that needs an existing
// document and parses its path; it returns ok=false when it has replied.
func jsonWrite(c *Ctx, path string) (*jsonKey, *jsondoc.Path, bool) {
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return nil, nil, false
	}
	if !k.exists {
		c.W.Error(errJSONNoKey)
		return nil, nil, false
	}
	p := jsonPath(c, path)
	if p == nil {
		return nil, nil, false
	}
	k.document()
	return k, p, true
}

// jsonNumber parses the number argument of NUMINCRBY/NUMMULTBY.
func jsonNumber(c *Ctx, b []byte) (any, bool) {
	v, ok := parseJSONArg(c, b)
	if !ok {
		return nil, false
	}
	switch v.(type) {
	case int64, float64:
		return v, true
	}
	c.W.Error(errJSONExpected("number", v))
	return nil, false
}

// numOp applies + or * the way RedisJSON does: integer when both operands
// are integers (a result that overflows int64 becomes a float), float
// otherwise. A float result must be finite.
func numOp(a, b any, mult bool) (any, bool) {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			if mult {
				if r := x * y; x == 0 || (r/x == y && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64)) {
					return r, true
				}
			} else if r := x + y; (r > x) == (y > 0) {
				return r, true
			}
		}
	}
	var r float64
	if mult {
		r = toFloat(a) * toFloat(b)
	} else {
		r = toFloat(a) + toFloat(b)
	}
	return r, !math.IsInf(r, 0) && !math.IsNaN(r)
}

func toFloat(v any) float64 {
	if i, ok := v.(int64); ok {
		return float64(i)
	}
	return v.(float64)
}

// JSON.NUMINCRBY / JSON.NUMMULTBY key path number. A JSONPath answers the
// new values as a JSON array ("[99]"), null where the match is not a
// number; RESP3 answers an array of numbers instead. A legacy path answers
// the last new value.
func jsonNumOp(c *Ctx, mult bool) {
	k, p, ok := jsonWrite(c, c.Arg(2))
	if !ok {
		return
	}
	var n any
	var results []any
	changed := false
	for _, l := range p.Locate(k.doc) {
		v := jsondoc.At(k.doc, l)
		switch v.(type) {
		case int64, float64:
		default:
			if !p.Legacy {
				results = append(results, nil)
			}
			continue
		}
		if n == nil {
			if n, ok = jsonNumber(c, c.Args[3]); !ok {
				return
			}
		}
		r, ok := numOp(v, n, mult)
		if !ok {
			c.W.Error(errJSONNaN)
			return
		}
		k.doc = jsondoc.SetAt(k.doc, l, r)
		results = append(results, r)
		changed = true
	}
	if p.Legacy && !changed {
		c.W.Error(errPathMissingOr(p.Fixed, "does not contains a number"))
		return
	}
	if changed {
		event := "json.numincrby"
		if mult {
			event = "json.nummultby"
		}
		k.save(event)
	}
	if p.Legacy {
		c.W.Bulk(jsondoc.Marshal(results[len(results)-1]))
		return
	}
	if c.W.Proto < 3 {
		if results == nil {
			results = []any{}
		}
		c.W.Bulk(jsondoc.Marshal(results))
		return
	}
	c.W.ArrayLen(len(results))
	for _, r := range results {
		switch x := r.(type) {
		case int64:
			c.W.Int(x)
		case float64:
			c.W.Double(x)
		default:
			c.W.Null()
		}
	}
}

// JSON.STRAPPEND key [path] value: the new lengths (bytes).
func cmdJSONStrAppend(c *Ctx) {
	path, arg := ".", c.Args[2]
	if len(c.Args) > 3 {
		path, arg = c.Arg(2), c.Args[3]
	}
	k, p, ok := jsonWrite(c, path)
	if !ok {
		return
	}
	var suffix *string
	var results []any
	for _, l := range p.Locate(k.doc) {
		s, isStr := jsondoc.At(k.doc, l).(string)
		if !isStr {
			if !p.Legacy {
				results = append(results, nil)
			}
			continue
		}
		if suffix == nil {
			v, ok := parseJSONArg(c, arg)
			if !ok {
				return
			}
			sv, ok := v.(string)
			if !ok {
				c.W.Error(errJSONExpected("string", v))
				return
			}
			suffix = &sv
		}
		s += *suffix
		k.doc = jsondoc.SetAt(k.doc, l, s)
		results = append(results, int64(len(s)))
	}
	jsonIntResults(c, k, p, "json.strappend", results, suffix != nil, "not a string")
}

// jsonIntResults ends a write whose replies are integers per match (nil
// where the match has the wrong type): it saves the document if changed
// (raising event) and answers the array, or for a legacy path the last result (or the
// "does not exist or <or>" error when nothing matched).
func jsonIntResults(c *Ctx, k *jsonKey, p *jsondoc.Path, event string, results []any, changed bool, or string) {
	if p.Legacy && len(results) == 0 {
		c.W.Error(errPathMissingOr(p.Fixed, or))
		return
	}
	if changed {
		k.save(event)
	}
	if p.Legacy {
		c.W.Int(results[len(results)-1].(int64))
		return
	}
	c.W.ArrayLen(len(results))
	for _, r := range results {
		if n, ok := r.(int64); ok {
			c.W.Int(n)
		} else {
			c.W.Null()
		}
	}
}

// JSON.STRLEN key [path]
func cmdJSONStrLen(c *Ctx) {
	k, p, ok := jsonRead(c, func(legacy bool) {
		if legacy {
			c.W.Null()
		} else {
			c.W.Error(errJSONNoKey)
		}
	})
	if !ok {
		return
	}
	doc := k.document()
	if p.Legacy {
		v, found := first(doc, p)
		s, isStr := v.(string)
		switch {
		case !found:
			c.W.Error(errPathMissing(p.Fixed))
		case !isStr:
			c.W.Error(errJSONExpected("string", v))
		default:
			c.W.Int(int64(len(s)))
		}
		return
	}
	vals := matches(doc, p)
	c.W.ArrayLen(len(vals))
	for _, v := range vals {
		if s, ok := v.(string); ok {
			c.W.Int(int64(len(s)))
		} else {
			c.W.Null()
		}
	}
}

// jsonValues parses the JSON value arguments from i on.
func jsonValues(c *Ctx, i int) ([]any, bool) {
	vals := make([]any, 0, len(c.Args)-i)
	for _, a := range c.Args[i:] {
		v, ok := parseJSONArg(c, a)
		if !ok {
			return nil, false
		}
		vals = append(vals, v)
	}
	return vals, true
}

// arrayOp runs fn on every array p matches; fn returns the array's new
// value and the integer result. Matches that are not arrays give nil.
func arrayOp(k *jsonKey, p *jsondoc.Path, fn func(a []any) ([]any, int64)) (results []any, changed bool) {
	for _, l := range p.Locate(k.doc) {
		a, ok := jsondoc.At(k.doc, l).([]any)
		if !ok {
			if !p.Legacy {
				results = append(results, nil)
			}
			continue
		}
		na, r := fn(a)
		k.doc = jsondoc.SetAt(k.doc, l, na)
		results = append(results, r)
		changed = true
	}
	return results, changed
}

// copies returns vals for the first use and deep copies after, so that no
// two places of a document share a value.
func copies(vals []any, used bool) []any {
	if !used {
		return vals
	}
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = jsondoc.Copy(v)
	}
	return out
}

// JSON.ARRAPPEND key path value [value ...]: the new lengths.
func cmdJSONArrAppend(c *Ctx) {
	vals, ok := jsonValues(c, 3)
	if !ok {
		return
	}
	k, p, ok := jsonWrite(c, c.Arg(2))
	if !ok {
		return
	}
	if !fitsIn(k.document(), p, vals) {
		c.W.Error(errJSONDepth)
		return
	}
	used := false
	results, changed := arrayOp(k, p, func(a []any) ([]any, int64) {
		a = append(a, copies(vals, used)...)
		used = true
		return a, int64(len(a))
	})
	if p.Legacy && len(results) == 0 {
		c.W.Error(errPathMissingOr(p.Orig, "not an array"))
		return
	}
	jsonIntResults(c, k, p, "json.arrappend", results, changed, "not an array")
}

// parseJSONInt parses an integer argument as RedisJSON does.
func parseJSONInt(c *Ctx, i int) (int64, bool) {
	n, ok := num.ParseInt(c.Args[i])
	if !ok {
		c.W.Error(errJSONInt)
	}
	return n, ok
}

// JSON.ARRINDEX key path value [start [stop]]: the first index of value in
// each array, -1 if absent. stop 0 means the end; out of range start and
// stop are clamped.
func cmdJSONArrIndex(c *Ctx) {
	if len(c.Args) > 6 {
		c.W.Error(WrongArity(c.Arg(0)))
		return
	}
	var start, stop int64
	var ok bool
	if len(c.Args) > 4 {
		if start, ok = parseJSONInt(c, 4); !ok {
			return
		}
	}
	if len(c.Args) > 5 {
		if stop, ok = parseJSONInt(c, 5); !ok {
			return
		}
	}
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return
	}
	want, ok := parseJSONArg(c, c.Args[3])
	if !ok {
		return
	}
	if !k.exists {
		c.W.Error(errPathMissing(c.Arg(2)))
		return
	}
	p := jsonPath(c, c.Arg(2))
	if p == nil {
		return
	}
	doc := k.document()
	index := func(a []any) int64 {
		n := int64(len(a))
		if n == 0 {
			return -1
		}
		s, e := start, stop
		if s < 0 {
			s = max(n+s, 0)
		} else {
			s = min(s, n-1)
		}
		switch {
		case e == 0:
			e = n
		case e < 0:
			e = max(n+e, 0)
		default:
			e = min(e, n)
		}
		for i := s; i < e; i++ {
			if jsondoc.Equal(a[i], want) {
				return i
			}
		}
		return -1
	}
	if p.Legacy {
		v, found := first(doc, p)
		a, isArr := v.([]any)
		switch {
		case !found:
			c.W.Error(errPathMissing(p.Fixed))
		case !isArr:
			c.W.Error(errJSONExpected("array", v))
		default:
			c.W.Int(index(a))
		}
		return
	}
	vals := matches(doc, p)
	c.W.ArrayLen(len(vals))
	for _, v := range vals {
		if a, ok := v.([]any); ok {
			c.W.Int(index(a))
		} else {
			c.W.Null()
		}
	}
}

// JSON.ARRINSERT key path index value [value ...]: the new lengths.
func cmdJSONArrInsert(c *Ctx) {
	index, ok := parseJSONInt(c, 3)
	if !ok {
		return
	}
	vals, ok := jsonValues(c, 4)
	if !ok {
		return
	}
	k, p, ok := jsonWrite(c, c.Arg(2))
	if !ok {
		return
	}
	if !fitsIn(k.document(), p, vals) {
		c.W.Error(errJSONDepth)
		return
	}
	used, bad := false, false
	results, changed := arrayOp(k, p, func(a []any) ([]any, int64) {
		n := int64(len(a))
		if index < -n || index > n {
			bad = true
			return a, n
		}
		i := index
		if i < 0 {
			i += n
		}
		ins := copies(vals, used)
		used = true
		out := make([]any, 0, len(a)+len(ins))
		out = append(append(append(out, a[:i]...), ins...), a[i:]...)
		return out, int64(len(out))
	})
	if bad {
		c.W.Error(errJSONBounds)
		return
	}
	jsonIntResults(c, k, p, "json.arrinsert", results, changed, "not an array")
}

// JSON.ARRLEN key [path]
func cmdJSONArrLen(c *Ctx) {
	k, p, ok := jsonRead(c, func(legacy bool) {
		if legacy {
			c.W.Null()
		} else {
			c.W.Error(errJSONNoKey)
		}
	})
	if !ok {
		return
	}
	vals := matches(k.document(), p)
	if p.Legacy {
		if len(vals) == 0 {
			c.W.Error(errPathMissing(p.Orig))
		} else if a, ok := vals[0].([]any); ok {
			c.W.Int(int64(len(a)))
		} else {
			c.W.Error(errPathMissingOr(p.Orig, "not an array"))
		}
		return
	}
	c.W.ArrayLen(len(vals))
	for _, v := range vals {
		if a, ok := v.([]any); ok {
			c.W.Int(int64(len(a)))
		} else {
			c.W.Null()
		}
	}
}

// JSON.ARRPOP key [path [index]]: the popped values serialized, nil for
// an empty array (or a match that is not an array). The index defaults to
// -1 (the last) and is clamped to the array.
func cmdJSONArrPop(c *Ctx) {
	index := int64(-1)
	if len(c.Args) > 3 {
		if n, ok := num.ParseInt(c.Args[3]); ok {
			index = n // RedisJSON takes an unreadable index as -1
		}
	}
	k, p, ok := jsonWrite(c, pathArg(c, 2))
	if !ok {
		return
	}
	var popped [][]byte // nil where nothing was popped
	changed, found := false, false
	for _, l := range p.Locate(k.doc) {
		a, isArr := jsondoc.At(k.doc, l).([]any)
		if !isArr {
			if !p.Legacy {
				popped = append(popped, nil)
			}
			continue
		}
		found = true
		if len(a) == 0 {
			popped = append(popped, nil)
			continue
		}
		n := int64(len(a))
		i := index
		if i < 0 {
			i = max(n+i, 0)
		} else {
			i = min(i, n-1)
		}
		popped = append(popped, jsondoc.Marshal(a[i]))
		k.doc = jsondoc.SetAt(k.doc, l, append(a[:i:i], a[i+1:]...))
		changed = true
	}
	if p.Legacy && !found {
		c.W.Error(errPathMissingOr(p.Fixed, "not an array"))
		return
	}
	if changed {
		k.save("json.arrpop")
	}
	if p.Legacy {
		if last := popped[len(popped)-1]; last != nil {
			c.W.Bulk(last)
		} else {
			c.W.Null()
		}
		return
	}
	c.W.ArrayLen(len(popped))
	for _, v := range popped {
		if v != nil {
			c.W.Bulk(v)
		} else {
			c.W.Null()
		}
	}
}

// JSON.ARRTRIM key path start stop: keeps the inclusive range and answers
// the new lengths. Out of range indexes are clamped; an empty range
// (start past the end or after stop) empties the array.
func cmdJSONArrTrim(c *Ctx) {
	start, ok := parseJSONInt(c, 3)
	if !ok {
		return
	}
	stop, ok := parseJSONInt(c, 4)
	if !ok {
		return
	}
	k, p, ok := jsonWrite(c, c.Arg(2))
	if !ok {
		return
	}
	results, changed := arrayOp(k, p, func(a []any) ([]any, int64) {
		n := int64(len(a))
		clamp := func(i int64) int64 {
			if i < 0 {
				return max(n+i, 0)
			}
			return min(i, n-1)
		}
		e := clamp(stop)
		s := e + 1
		if start < 0 || start < n {
			s = clamp(start)
		}
		if n == 0 || s > e {
			return []any{}, 0
		}
		out := append([]any(nil), a[s:e+1]...)
		return out, int64(len(out))
	})
	jsonIntResults(c, k, p, "json.arrtrim", results, changed, "not an array")
}

// JSON.OBJKEYS key [path]
func cmdJSONObjKeys(c *Ctx) {
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return
	}
	path := pathArg(c, 2)
	p, err := jsondoc.ParsePath(path)
	legacy := len(path) == 0 || path[0] != '$'
	if !legacy && err != nil {
		c.W.Error(jsonPathError(err))
		return
	}
	if !k.exists {
		if legacy {
			c.W.Null()
		} else {
			c.W.Error(errJSONNoKey)
		}
		return
	}
	writeKeys := func(o *jsondoc.Object) {
		c.W.ArrayLen(o.Len())
		for _, key := range o.Keys() {
			c.W.BulkString(key)
		}
	}
	if legacy {
		var v any
		found := false
		if err == nil {
			v, found = first(k.document(), p)
		}
		o, isObj := v.(*jsondoc.Object)
		switch {
		case !found:
			c.W.Null()
		case !isObj:
			c.W.Error(errPathMissingOr(p.Fixed, "not an object"))
		default:
			writeKeys(o)
		}
		return
	}
	vals := matches(k.document(), p)
	c.W.ArrayLen(len(vals))
	for _, v := range vals {
		if o, ok := v.(*jsondoc.Object); ok {
			writeKeys(o)
		} else {
			c.W.Null()
		}
	}
}

// JSON.OBJLEN key [path]
func cmdJSONObjLen(c *Ctx) {
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return
	}
	path := pathArg(c, 2)
	p, err := jsondoc.ParsePath(path)
	legacy := len(path) == 0 || path[0] != '$'
	if legacy {
		var v any
		found := false
		if k.exists && err == nil {
			v, found = first(k.document(), p)
		}
		o, isObj := v.(*jsondoc.Object)
		switch {
		case !found:
			c.W.Null()
		case !isObj:
			c.W.Error(errJSONExpected("object", v))
		default:
			c.W.Int(int64(o.Len()))
		}
		return
	}
	if !k.exists {
		c.W.Error(errPathMissingOr(path, "not an object"))
		return
	}
	if err != nil {
		c.W.Error(jsonPathError(err))
		return
	}
	vals := matches(k.document(), p)
	c.W.ArrayLen(len(vals))
	for _, v := range vals {
		if o, ok := v.(*jsondoc.Object); ok {
			c.W.Int(int64(o.Len()))
		} else {
			c.W.Null()
		}
	}
}

// JSON.CLEAR key [path]: empties arrays and objects and sets numbers to
// 0; answers how many values it changed (already empty or zero ones do not
// count). RedisJSON reads only the first path.
func cmdJSONClear(c *Ctx) {
	path := "$"
	if len(c.Args) > 2 {
		path = c.Arg(2)
	}
	k, p, ok := jsonWrite(c, path)
	if !ok {
		return
	}
	cleared := int64(0)
	for _, l := range p.Locate(k.doc) {
		var v any
		switch x := jsondoc.At(k.doc, l).(type) {
		case []any:
			if len(x) == 0 {
				continue
			}
			v = []any{}
		case *jsondoc.Object:
			if x.Len() == 0 {
				continue
			}
			v = jsondoc.NewObject()
		case int64:
			if x == 0 {
				continue
			}
			v = int64(0)
		case float64:
			if x == 0 {
				continue
			}
			v = int64(0)
		default:
			continue
		}
		k.doc = jsondoc.SetAt(k.doc, l, v)
		cleared++
	}
	if cleared > 0 {
		k.save("json.clear")
	}
	c.W.Int(cleared)
}

// JSON.TOGGLE key path: the new values, 1 or 0 (a legacy path answers
// "true" or "false").
func cmdJSONToggle(c *Ctx) {
	k, p, ok := jsonWrite(c, c.Arg(2))
	if !ok {
		return
	}
	var results []any
	for _, l := range p.Locate(k.doc) {
		b, isBool := jsondoc.At(k.doc, l).(bool)
		if !isBool {
			if !p.Legacy {
				results = append(results, nil)
			}
			continue
		}
		k.doc = jsondoc.SetAt(k.doc, l, !b)
		results = append(results, !b)
	}
	if p.Legacy {
		if len(results) == 0 {
			c.W.Error(errPathMissingOr(p.Fixed, "not a bool"))
			return
		}
		k.save("json.toggle")
		c.W.BulkString(strconv.FormatBool(results[len(results)-1].(bool)))
		return
	}
	changed := false
	c.W.ArrayLen(len(results))
	for _, r := range results {
		switch r {
		case true:
			c.W.Int(1)
		case false:
			c.W.Int(0)
		default:
			c.W.Null()
			continue
		}
		changed = true
	}
	if changed {
		k.save("json.toggle")
	}
}

// mergePatch applies patch to target as RFC 7396 says: an object patch
// merges member by member (null removes), anything else replaces.
func mergePatch(target, patch any) any {
	po, ok := patch.(*jsondoc.Object)
	if !ok {
		return patch
	}
	to, ok := target.(*jsondoc.Object)
	if !ok {
		to = jsondoc.NewObject()
	}
	for i, key := range po.Keys() {
		v := po.Value(i)
		if v == nil {
			to.RemoveValueForKey(key)
			continue
		}
		cur, _ := to.ValueForKey(key)
		to.SetValueForKey(key, mergePatch(cur, v))
	}
	return to
}

// JSON.MERGE key path value: merges value into every match (RFC 7396), or
// adds it where JSON.SET would.
func cmdJSONMerge(c *Ctx) {
	k, ok := openJSON(c, c.Args[1])
	if !ok {
		return
	}
	val, ok := parseJSONArg(c, c.Args[3])
	if !ok {
		return
	}
	p := jsonPath(c, c.Arg(2))
	if p == nil {
		return
	}
	if !k.exists {
		if !p.IsRoot() {
			c.W.Error(errJSONNewRoot)
			return
		}
		k.doc, k.parsed = mergePatch(nil, val), true
		k.save("json.merge")
		c.W.OK()
		return
	}
	doc := k.document()
	locs := p.Locate(doc)
	if len(locs) == 0 {
		to, key, errMsg := jsonAddPlaces(doc, p)
		if errMsg != "" {
			c.W.Error(errMsg)
			return
		}
		add := jsonSetPlan{addTo: to, addKey: key}
		if !add.fits(val) {
			c.W.Error(errJSONDepth)
			return
		}
		if add.apply(k, mergePatch(nil, val)) {
			k.save("json.merge")
		}
		c.W.OK()
		return
	}
	// A merge nests no deeper than the value or the patch at each place.
	if !(&jsonSetPlan{set: locs}).fits(val) {
		c.W.Error(errJSONDepth)
		return
	}
	for i, l := range jsondoc.ForDeletion(locs) {
		patch := val
		if i > 0 {
			patch = jsondoc.Copy(val)
		}
		if patch == nil && len(l) > 0 {
			k.doc = jsondoc.RemoveAt(k.doc, l) // merging null removes the value
			continue
		}
		k.doc = jsondoc.SetAt(k.doc, l, mergePatch(jsondoc.At(k.doc, l), patch))
	}
	k.save("json.merge")
	c.W.OK()
}

// JSON.RESP key [path]: the value as RESP: null, "true"/"false" status
// replies, integers, doubles, bulk strings, arrays as ["[", elements...]
// and objects as ["{", key, value, ...].
func cmdJSONResp(c *Ctx) {
	k, p, ok := jsonRead(c, func(bool) { c.W.Null() })
	if !ok {
		return
	}
	doc := k.document()
	if p.Legacy {
		v, found := first(doc, p)
		if !found {
			c.W.Error(errPathMissing(p.Fixed))
			return
		}
		jsonRESP(c, v)
		return
	}
	vals := matches(doc, p)
	c.W.ArrayLen(len(vals))
	for _, v := range vals {
		jsonRESP(c, v)
	}
}

func jsonRESP(c *Ctx, v any) {
	switch x := v.(type) {
	case nil:
		c.W.Null()
	case bool:
		c.W.Simple(strconv.FormatBool(x))
	case int64:
		c.W.Int(x)
	case float64:
		c.W.Double(x)
	case string:
		c.W.BulkString(x)
	case []any:
		c.W.ArrayLen(len(x) + 1)
		c.W.Simple("[")
		for _, e := range x {
			jsonRESP(c, e)
		}
	case *jsondoc.Object:
		c.W.ArrayLen(2*x.Len() + 1)
		c.W.Simple("{")
		for i, key := range x.Keys() {
			c.W.BulkString(key)
			jsonRESP(c, x.Value(i))
		}
	}
}

// jsonDebugHelp is RedisJSON's JSON.DEBUG HELP text.
var jsonDebugHelp = []string{
	"MEMORY <key> [path] - reports memory usage",
	"HELP                - this message",
}

// JSON.DEBUG MEMORY key [path] | JSON.DEBUG HELP. Arguments past those are
// ignored, as RedisJSON ignores them.
func cmdJSONDebug(c *Ctx) {
	switch strings.ToUpper(c.Arg(1)) {
	case "MEMORY":
		if len(c.Args) < 3 {
			c.W.Error(WrongArity("json.debug"))
			return
		}
		jsonDebugMemory(c)
	case "HELP":
		c.W.ArrayLen(len(jsonDebugHelp))
		for _, s := range jsonDebugHelp {
			c.W.BulkString(s)
		}
	default:
		c.W.Error(errJSONDebug)
	}
}

// jsonDebugMemory answers JSON.DEBUG MEMORY key [path]: for each match (a
// JSONPath) or the first one (a legacy path, the default), the size in
// bytes of the value's compact JSON text. basalt keeps a document as that
// text, so that is what the value takes in the store; RedisJSON answers
// the size of its in-memory tree instead, usually larger. A missing key
// answers 0, or an empty array for a JSONPath.
func jsonDebugMemory(c *Ctx) {
	k, ok := openJSON(c, c.Args[2])
	if !ok {
		return
	}
	path := "."
	if len(c.Args) > 3 {
		path = c.Arg(3)
	}
	legacy := len(path) == 0 || path[0] != '$'
	if !k.exists {
		if legacy {
			c.W.Int(0)
		} else {
			c.W.ArrayLen(0)
		}
		return
	}
	p := jsonPath(c, path)
	if p == nil {
		return
	}
	if p.IsRoot() {
		// The stored body is the whole document's compact text.
		if !legacy {
			c.W.ArrayLen(1)
		}
		c.W.Int(int64(len(k.m.Body)))
		return
	}
	size := func(v any) int64 { return int64(len(jsondoc.Marshal(v))) }
	doc := k.document()
	if legacy {
		v, found := first(doc, p)
		if !found {
			c.W.Error(errPathMissing(p.Fixed))
			return
		}
		c.W.Int(size(v))
		return
	}
	vals := matches(doc, p)
	c.W.ArrayLen(len(vals))
	for _, v := range vals {
		c.W.Int(size(v))
	}
}
