package jsondoc

import (
	"cmp"
	"slices"
	"unicode/utf8"

	"github.com/ohler55/ojg/jp"
)

// Path is a parsed path argument. RedisJSON takes two syntaxes: JSONPath,
// starting with '$', whose replies have one element per match; and the
// legacy syntax (".a.b", "a", "."), which answers for the first match and
// errs when nothing matches. A legacy path is read as the JSONPath "$" + it
// (or "$." + it when it does not start with '.' or '['), as RedisJSON does.
type Path struct {
	Legacy bool
	Orig   string // as given, for error messages that quote it
	Fixed  string // the JSONPath actually evaluated ("$.a" for ".a")
	expr   jp.Expr
	root   bool // the path is the root itself
	// filterStep is the number of location steps up to and including the
	// last filter, when the path has filters and no descent ("..").
	filterStep int
}

// ParsePath parses a path argument with ojg's JSONPath parser.
func ParsePath(s string) (*Path, error) {
	if !utf8.ValidString(s) {
		return nil, ErrUTF8
	}
	p := &Path{Orig: s, Fixed: s}
	if len(s) == 0 || s[0] != '$' {
		p.Legacy = true
		switch {
		case s == ".":
			p.Fixed = "$"
		case len(s) > 0 && (s[0] == '.' || s[0] == '['):
			p.Fixed = "$" + s
		default:
			p.Fixed = "$." + s
		}
	}
	x, err := jp.ParseString(dropDotBracket(p.Fixed))
	if err != nil {
		return nil, err
	}
	// Bracket only marks how the path was written.
	p.expr = x[:0:0]
	for _, f := range x {
		if _, ok := f.(jp.Bracket); !ok {
			p.expr = append(p.expr, f)
		}
	}
	if len(p.expr) == 0 {
		return nil, errEmptyPath
	}
	if _, ok := p.expr[0].(jp.Root); !ok {
		return nil, errEmptyPath
	}
	// RedisJSON's grammar wants a name, '*' or a bracket after "..";
	// ojg takes a bare one (at the end, or "...." as two), and each such
	// descent multiplies the work of the next: a path of a few KB of dots
	// would run for ever.
	for i, f := range p.expr {
		if _, ok := f.(jp.Descent); ok {
			if i+1 == len(p.expr) {
				return nil, errDescentEnd
			}
			if _, ok := p.expr[i+1].(jp.Descent); ok {
				return nil, errDescentEnd
			}
		}
	}
	p.root = len(p.expr) == 1
	for i, f := range p.expr {
		switch f.(type) {
		case *jp.Filter:
			p.filterStep = i // Root takes no step, every other fragment one
		case jp.Descent:
			p.filterStep = 0
			return p, nil
		}
	}
	return p, nil
}

// dropDotBracket rewrites "$.[1]" as "$[1]": RedisJSON accepts a dot
// before a bracket, ojg does not. Quoted names and ".." stay as they are.
func dropDotBracket(s string) string {
	out := make([]byte, 0, len(s))
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && i+1 < len(s) {
				out = append(out, c)
				i++
				c = s[i]
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '.' && i+1 < len(s) && s[i+1] == '[' && (i == 0 || s[i-1] != '.'):
			continue
		}
		out = append(out, c)
	}
	return string(out)
}

type pathError string

func (e pathError) Error() string { return string(e) }

const errEmptyPath = pathError("path must start at the root")

const errDescentEnd = pathError("'..' must be followed by a name, '*' or '['")

// ErrUTF8 is the error for a path that is not valid UTF-8.
const ErrUTF8 = pathError("Couldn't parse as UTF-8 string")

// IsRoot reports whether the path is the whole document ("$" or ".").
func (p *Path) IsRoot() bool { return p.root }

// Loc is a concrete location in a document: the object keys (string) and
// array indexes (int) from the root.
type Loc []any

// Locate returns the locations the path matches in doc, in RedisJSON's
// order (document order, a parent before its descendants).
func (p *Path) Locate(doc any) []Loc {
	if p.root {
		return []Loc{{}}
	}
	exprs := p.expr.Locate(doc, 0)
	out := make([]Loc, 0, len(exprs))
	for _, x := range exprs {
		if l, ok := toLoc(doc, x); ok {
			out = append(out, l)
		}
	}
	if p.filterStep > 0 && len(out) > 1 {
		// ojg evaluates a filter from the last element to the first; put
		// its matches back in document order, as RedisJSON answers.
		n := p.filterStep
		slices.SortStableFunc(out, func(a, b Loc) int { return docOrder(doc, a[:n], b[:n]) })
	}
	return out
}

// docOrder compares two locations of equal length by their place in doc.
func docOrder(doc any, a, b Loc) int {
	cur := doc
	for i := range a {
		switch k := a[i].(type) {
		case string:
			o := cur.(*Object)
			if c := cmp.Compare(o.find(k), o.find(b[i].(string))); c != 0 {
				return c
			}
			cur, _ = o.ValueForKey(k)
		case int:
			if c := cmp.Compare(k, b[i].(int)); c != 0 {
				return c
			}
			cur = cur.([]any)[k]
		}
	}
	return 0
}

// toLoc turns a normalized ojg path into a Loc, resolving negative indexes.
func toLoc(doc any, x jp.Expr) (Loc, bool) {
	l := make(Loc, 0, len(x))
	cur := doc
	for _, f := range x {
		switch t := f.(type) {
		case jp.Root, jp.Bracket:
		case jp.Child:
			o, ok := cur.(*Object)
			if !ok {
				return nil, false
			}
			cur, _ = o.ValueForKey(string(t))
			l = append(l, string(t))
		case jp.Nth:
			a, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			i := int(t)
			if i < 0 {
				i += len(a)
			}
			if i < 0 || i >= len(a) {
				return nil, false
			}
			cur = a[i]
			l = append(l, i)
		default:
			return nil, false
		}
	}
	return l, true
}

// Get returns the values the path matches.
func (p *Path) Get(doc any) []any {
	if p.root {
		return []any{doc}
	}
	return p.expr.Get(doc)
}

// At returns the value at l, or nil when l does not lead anywhere (a
// location found before the document changed under it).
func At(doc any, l Loc) any {
	v, _ := Find(doc, l)
	return v
}

// Find returns the value at l and whether l leads to one.
func Find(doc any, l Loc) (any, bool) {
	cur := doc
	for _, s := range l {
		switch k := s.(type) {
		case string:
			o, ok := cur.(*Object)
			if !ok {
				return nil, false
			}
			if cur, ok = o.ValueForKey(k); !ok {
				return nil, false
			}
		case int:
			a, ok := cur.([]any)
			if !ok || k >= len(a) {
				return nil, false
			}
			cur = a[k]
		}
	}
	return cur, true
}

// SetAt replaces the value at l and returns the document (a new root when
// l is the root). A location whose parent is gone changes nothing, as in
// RedisJSON when an earlier match of the same command replaced it.
func SetAt(doc any, l Loc, v any) any {
	if len(l) == 0 {
		return v
	}
	parent, _ := Find(doc, l[:len(l)-1])
	switch k := l[len(l)-1].(type) {
	case string:
		if o, ok := parent.(*Object); ok {
			o.SetValueForKey(k, v)
		}
	case int:
		if a, ok := parent.([]any); ok && k < len(a) {
			a[k] = v // the slice shares its array with its holder
		}
	}
	return doc
}

// RemoveAt removes the value at l (not the root) from its object or array.
func RemoveAt(doc any, l Loc) any {
	ploc := l[:len(l)-1]
	parent, _ := Find(doc, ploc)
	switch k := l[len(l)-1].(type) {
	case string:
		if o, ok := parent.(*Object); ok {
			o.RemoveValueForKey(k)
		}
	case int:
		if a, ok := parent.([]any); ok && k < len(a) {
			doc = SetAt(doc, ploc, slices.Delete(a, k, k+1))
		}
	}
	return doc
}

// Static reports whether the path names one place (only keys and indexes),
// and if so returns its parent path and its last step (string or int), as
// JSON.SET needs to add a member that does not exist yet.
func (p *Path) Static() (parent *Path, last any, ok bool) {
	if p.root {
		return nil, nil, false
	}
	for _, f := range p.expr[1:] {
		switch f.(type) {
		case jp.Child, jp.Nth:
		default:
			return nil, nil, false
		}
	}
	parent = &Path{Legacy: p.Legacy, Orig: p.Orig, Fixed: p.Fixed, expr: p.expr[:len(p.expr)-1]}
	parent.root = len(parent.expr) == 1
	switch f := p.expr[len(p.expr)-1].(type) {
	case jp.Child:
		last = string(f)
	case jp.Nth:
		last = int(f)
	}
	return parent, last, true
}

// ForDeletion orders locations so that removing them one after the other
// removes what each named: a location inside another is dropped (removing
// the outer one removes it), and later array elements go before earlier
// ones, so indexes stay valid.
func ForDeletion(locs []Loc) []Loc {
	slices.SortFunc(locs, func(a, b Loc) int { return -compareLoc(a, b) })
	out := make([]Loc, 0, len(locs))
	for _, l := range locs {
		nested := false
		for _, o := range locs {
			if len(o) < len(l) && isPrefix(o, l) {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, l)
		}
	}
	return slices.CompactFunc(out, func(a, b Loc) bool { return compareLoc(a, b) == 0 })
}

func isPrefix(p, l Loc) bool {
	for i := range p {
		if compareStep(p[i], l[i]) != 0 {
			return false
		}
	}
	return true
}

func compareLoc(a, b Loc) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareStep(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareStep(a, b any) int {
	switch x := a.(type) {
	case int:
		if y, ok := b.(int); ok {
			return cmp.Compare(x, y)
		}
		return 1
	case string:
		if y, ok := b.(string); ok {
			return cmp.Compare(x, y)
		}
		return -1
	}
	return 0
}
