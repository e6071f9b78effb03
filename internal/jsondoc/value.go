// Package jsondoc is the document model behind basalt's JSON commands
// (RedisJSON 2.x compatible): a parser and a serializer that keep integers
// and floats apart and object keys in insertion order, as RedisJSON does,
// and path handling on top of github.com/ohler55/ojg's JSONPath.
//
// A value is one of: nil (null), bool, string, int64, float64, []any (an
// array) or *Object.
package jsondoc

// Object is a JSON object whose keys keep their insertion order, as
// RedisJSON's objects do (OBJKEYS and serialization follow it). It
// implements ojg's jp.Keyed, so JSONPath queries walk it directly.
type Object struct {
	keys []string
	vals []any
	idx  map[string]int // built once the object is big enough to need it
}

// indexFrom is the size from which lookups go through a map rather than a
// scan of the keys.
const indexFrom = 16

// NewObject returns an empty object.
func NewObject() *Object { return &Object{} }

// Len is the number of members.
func (o *Object) Len() int { return len(o.keys) }

func (o *Object) find(key string) int {
	if len(o.keys) >= indexFrom {
		if o.idx == nil {
			o.idx = make(map[string]int, len(o.keys))
			for i, k := range o.keys {
				o.idx[k] = i
			}
		}
		if i, ok := o.idx[key]; ok {
			return i
		}
		return -1
	}
	for i, k := range o.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// ValueForKey returns the member key.
func (o *Object) ValueForKey(key string) (any, bool) {
	if i := o.find(key); i >= 0 {
		return o.vals[i], true
	}
	return nil, false
}

// SetValueForKey replaces key's value in place or appends a new member.
func (o *Object) SetValueForKey(key string, value any) {
	if i := o.find(key); i >= 0 {
		o.vals[i] = value
		return
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, value)
	if o.idx != nil {
		o.idx[key] = len(o.keys) - 1
	}
}

// RemoveValueForKey removes key if present.
func (o *Object) RemoveValueForKey(key string) {
	i := o.find(key)
	if i < 0 {
		return
	}
	o.keys = append(o.keys[:i], o.keys[i+1:]...)
	o.vals = append(o.vals[:i], o.vals[i+1:]...)
	o.idx = nil // positions moved; rebuilt on the next lookup
}

// Keys returns the keys in order. The slice belongs to the object.
func (o *Object) Keys() []string { return o.keys }

// Value returns the i-th member's value.
func (o *Object) Value(i int) any { return o.vals[i] }

// Clear removes every member.
func (o *Object) Clear() { o.keys, o.vals, o.idx = nil, nil, nil }

// TypeName is the name JSON.TYPE gives v.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case *Object:
		return "object"
	}
	return "unknown"
}

// Equal compares two values as JSON.ARRINDEX does: same type and value
// (1 and 1.0 differ, as integer and number).
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			v, ok := y.ValueForKey(k)
			if !ok || !Equal(x.vals[i], v) {
				return false
			}
		}
		return true
	}
	return false
}

// Copy returns a deep copy of v, for a value inserted at several places.
func Copy(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Copy(e)
		}
		return out
	case *Object:
		out := &Object{keys: append([]string(nil), x.keys...), vals: make([]any, len(x.vals))}
		for i, e := range x.vals {
			out.vals[i] = Copy(e)
		}
		return out
	}
	return v
}

// Depth is how many containers deep v nests: 0 for a scalar, 1 for an
// array or object of scalars. Parse refuses a text deeper than MaxDepth,
// so a stored document must never become deeper (the JSON commands check
// with it before they insert a value).
func Depth(v any) int {
	deepest := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			deepest = max(deepest, Depth(e))
		}
	case *Object:
		for _, e := range v.vals {
			deepest = max(deepest, Depth(e))
		}
	default:
		return 0
	}
	return deepest + 1
}
