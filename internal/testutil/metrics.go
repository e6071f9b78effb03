package testutil

import (
	"io"
	"net/http"
	"strconv"
	"testing"
)

// Metrics returns the text of /metrics that a basalt started with
// --metrics-addr 127.0.0.1:port serves.
func Metrics(t testing.TB, port int) string {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
