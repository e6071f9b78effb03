package store

import (
	"strings"
	"testing"

	"basalt/internal/testutil"

	"github.com/cockroachdb/pebble/v2"
)

// A write stall is counted and logged at notice with its reason, and its
// end with how long it lasted; a second one within stallLogEvery is
// counted, not logged.
func TestWriteStallLog(t *testing.T) {
	buf := testutil.CaptureLog(t)

	st := &stalls{limit: LogLimit{Period: stallLogEvery}}
	l := st.listener()
	for range 2 {
		l.WriteStallBegin(pebble.WriteStallBeginInfo{Reason: "L0 file count limit exceeded"})
		l.WriteStallEnd()
	}
	if st.count != 2 {
		t.Errorf("%d stalls counted, want 2", st.count)
	}
	text := buf.String()
	if strings.Count(text, "pebble: writes stalled") != 1 || !strings.Contains(text, `reason="L0 file count limit exceeded"`) ||
		strings.Count(text, "pebble: writes resumed") != 1 || !strings.Contains(text, "stalled_for=") {
		t.Errorf("want one line for the stall and one for its end:\n%s", text)
	}
}
