package command

import (
	"strings"

	"basalt/internal/num"
)

// scanOptions are the options of SCAN, HSCAN, SSCAN and ZSCAN.
type scanOptions struct {
	count int64
	pat   []byte // nil: everything ("*" included, which Redis doesn't match against)
	typ   []byte // SCAN's TYPE; nil when absent
}

// parseScanOptions reads [MATCH pattern] [COUNT count] (and [TYPE type] when
// withType) from argument i on, answering errors as Redis does.
func parseScanOptions(c *Ctx, i int, withType bool) (scanOptions, bool) {
	o := scanOptions{count: 10}
	for ; i < len(c.Args); i += 2 {
		if i+1 >= len(c.Args) {
			c.W.Error(ErrSyntax)
			return o, false
		}
		switch opt := strings.ToLower(c.Arg(i)); {
		case opt == "count":
			n, ok := num.ParseInt(c.Args[i+1])
			if !ok {
				c.W.Error(ErrNotInt)
				return o, false
			}
			if n < 1 {
				c.W.Error(ErrSyntax)
				return o, false
			}
			o.count = n
		case opt == "match":
			o.pat = c.Args[i+1]
			if string(o.pat) == "*" {
				o.pat = nil
			}
		case opt == "type" && withType:
			o.typ = c.Args[i+1]
		default:
			c.W.Error(ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// emptyScan is the reply of a scan of a missing key.
func emptyScan(c *Ctx) {
	c.W.ArrayLen(2)
	c.W.BulkString("0")
	c.W.ArrayLen(0)
}
