package testutil

import (
	"bytes"
	"log/slog"
	"testing"
)

// CaptureLog sends the default slog logger's lines, as text at every
// level from Info, to the returned buffer until the test ends. For lines
// the test's own goroutine logs: the buffer is not locked.
func CaptureLog(t testing.TB) *bytes.Buffer {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return &buf
}
