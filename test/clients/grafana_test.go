package clients

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"basalt/internal/testutil"
)

// metricName is a name /metrics exports, in a PromQL query: basalt's own,
// redis_exporter's, Go's and the process's all start with one of these.
var metricName = regexp.MustCompile(`\b(?:redis|basalt|go|process)_[a-zA-Z0-9_:]*`)

// The Grafana dashboard in deploy/ queries only metrics /metrics exports,
// so that it cannot silently rot when a metric is renamed or dropped.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/basalt.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("deploy/grafana/basalt.json: %v", err)
	}
	var queries []string // every "expr" and "query" string, panels and variables
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && (k == "expr" || k == "query" && strings.Contains(s, "(")) {
					queries = append(queries, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(dash)
	if len(queries) < 20 {
		t.Fatalf("only %d queries found in the dashboard", len(queries))
	}

	port := testutil.FreePort(t)
	b := testutil.StartBasalt(t, "", "--metrics-addr", "127.0.0.1:"+strconv.Itoa(port))
	c := testutil.Dial(t, b.Addr)
	c.Do("SET", "k", "v") // commandstats and keyspace lines appear once used
	c.Do("GET", "k")
	exported := map[string]bool{}
	for _, line := range strings.Split(testutil.Metrics(t, port), "\n") {
		if name, _, _ := strings.Cut(line, " "); name != "" && !strings.HasPrefix(line, "#") {
			name, _, _ = strings.Cut(name, "{")
			exported[name] = true
		}
	}

	for _, q := range queries {
		names := metricName.FindAllString(q, -1)
		if len(names) == 0 {
			t.Errorf("query names no metric of basalt's: %s", q)
		}
		for _, name := range names {
			if !exported[name] {
				t.Errorf("the dashboard queries %s, which /metrics does not export: %s", name, q)
			}
		}
	}
}
