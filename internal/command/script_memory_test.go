package command

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// FuzzFormatBound checks that string.format never builds more than
// formatBound says, whatever the format and arguments.
func FuzzFormatBound(f *testing.F) {
	for _, format := range []string{"%5d|%-3s|%.2f", "%99999999d", "%[1]s%[1]s%[1]q", "%%%5.3s", "%*d", "%x%X%q", "%[2]*[1]d", "plain"} {
		f.Add(format, "arg\x00\xff", 12.5)
	}
	f.Fuzz(func(t *testing.T, format, arg string, num float64) {
		L := lua.NewState()
		defer L.Close()
		L.SetTop(0)
		L.Push(lua.LString(format))
		L.Push(lua.LString(arg))
		L.Push(lua.LNumber(num))
		bound := formatBound(L)
		L.SetTop(0)
		str := L.GetGlobal("string").(*lua.LTable)
		err := L.CallByParam(lua.P{Fn: str.RawGetString("format"), NRet: 1, Protect: true},
			lua.LString(format), lua.LString(arg), lua.LNumber(num))
		if err != nil {
			return // refused by format itself
		}
		if out := L.Get(-1).String(); int64(len(out)) > bound {
			t.Fatalf("string.format(%q, %q, %v) built %d bytes, bound %d", format, arg, num, len(out), bound)
		}
	})
}
