package clients

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"basalt/internal/testutil"
)

// redis_exporter (github.com/oliver006/redis_exporter), the exporter
// Redis's Prometheus users run, scrapes basalt as it scrapes
// redis-server: the same metric names, and the values its dashboards
// graph.

// exporterVersion is the redis_exporter the suite builds: the newest the
// Go module proxy serves whole (v1.62.0's checksum is missing from
// sum.golang.org, and the proxy refuses this module's version list, so
// `go install ...@version` fails: the test builds it in a module of its
// own instead).
const exporterVersion = "v1.61.0"

// exporterNotApplicable lists the redis_exporter metrics redis-server
// gives and basalt does not (docs/operations.md): none today.
var exporterNotApplicable = map[string]bool{}

func TestRedisExporter(t *testing.T) {
	exporter := redisExporter(t)
	redis := testutil.StartRedis(t)
	basalt := testutil.StartBasalt(t, "")
	for _, p := range []*testutil.Proc{redis, basalt} {
		c := testutil.Dial(t, p.Addr)
		for _, cmd := range [][]string{{"SET", "a", "1"}, {"SET", "b", "2", "EX", "100"}, {"GET", "a"}, {"GET", "nokey"}, {"SET", "k", "v", "EX", "100"}} {
			if r := c.Do(cmd...); r.IsError() {
				t.Fatalf("%v: %v", cmd, r)
			}
		}
	}
	want, got := scrapeExporter(t, exporter, redis.Addr), scrapeExporter(t, exporter, basalt.Addr)
	if n := len(names(got)); n < 150 {
		t.Errorf("redis_exporter gives %d metric names for basalt", n)
	}
	for name := range names(want) {
		if !names(got)[name] && !exporterNotApplicable[name] {
			t.Errorf("redis_exporter gives %s for redis-server, not for basalt", name)
		}
	}
	// What both servers count alike, exactly.
	for _, series := range []string{
		"redis_up", `redis_db_keys{db="db0"}`, `redis_db_keys_expiring{db="db0"}`, "redis_keyspace_hits_total",
		"redis_keyspace_misses_total", `redis_commands_total{cmd="set"}`, `redis_commands_total{cmd="get"}`,
		"redis_connected_slaves", "redis_connected_clients", "redis_blocked_clients",
	} {
		w, ok1 := want[series]
		g, ok2 := got[series]
		if !ok1 || !ok2 || w != g {
			t.Errorf("%s: redis-server %v, basalt %v", series, w, g)
		}
	}
	// What differs by nature, within bounds.
	for series, ok := range map[string]func(float64) bool{
		"redis_uptime_in_seconds":          func(v float64) bool { return v >= 0 && v < 600 },
		"redis_memory_used_bytes":          func(v float64) bool { return v > 1<<20 && v < 1<<32 },
		"redis_commands_processed_total":   func(v float64) bool { return v >= 5 && v < 1000 },
		"redis_connections_received_total": func(v float64) bool { return v >= 2 && v < 1000 },
	} {
		if v, found := got[series]; !found || !ok(v) {
			t.Errorf("basalt's %s: %v (found: %v)", series, v, found)
		}
	}
	if !hasSeries(got, "redis_instance_info", `role="master"`) {
		t.Errorf("no redis_instance_info with role master for basalt")
	}
}

// TestRedisExporterReplicas: on a 3-node cluster, the leader counts its
// replicas and a follower shows a replica whose link is up, as Redis's
// replication dashboards read them.
func TestRedisExporterReplicas(t *testing.T) {
	exporter := redisExporter(t)
	c := testutil.StartCluster(t, 3)
	// Until both hold, within a bound: on a loaded machine an election
	// may move the roles between the scrapes.
	deadline := time.Now().Add(30 * time.Second)
	for {
		leader := c.WaitLeader(t, 15*time.Second)
		follower := c.Follower(t)
		problem := replicationProblem(scrapeExporter(t, exporter, c.Nodes[leader].Addr), scrapeExporter(t, exporter, c.Nodes[follower].Addr))
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(problem)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// replicationProblem says what a leader's and a follower's scrapes lack
// ("" if nothing).
func replicationProblem(leader, follower map[string]float64) string {
	switch {
	case !hasSeries(leader, "redis_instance_info", `role="master"`) || leader["redis_connected_slaves"] != 2:
		return fmt.Sprintf("leader: not role master with redis_connected_slaves 2: %v", leader)
	case !hasSeries(follower, "redis_instance_info", `role="slave"`) || !hasSeries(follower, "redis_master_link_up", ""):
		return fmt.Sprintf("follower: not role slave with redis_master_link_up: %v", follower)
	}
	for s, v := range follower {
		if strings.HasPrefix(s, "redis_master_link_up{") && v != 1 {
			return fmt.Sprintf("follower: %s %v", s, v)
		}
	}
	return ""
}

// scrapeExporter runs redis_exporter against a server on a free port and
// returns one scrape of its /metrics: each series ("name{labels}") and
// its value.
func scrapeExporter(t *testing.T, exporter, addr string) map[string]float64 {
	t.Helper()
	port := testutil.FreePort(t)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(exporter, "-redis.addr", "redis://"+addr, "-web.listen-address", listen)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if nc, err := net.Dial("tcp", listen); err == nil {
			nc.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis_exporter does not listen on %s after 10s", listen)
		}
		time.Sleep(20 * time.Millisecond)
	}
	series := map[string]float64{}
	for _, line := range strings.Split(testutil.Metrics(t, port), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if line == "" || line[0] == '#' || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("redis_exporter's line %q: %v", line, err)
		}
		series[line[:i]] = v
	}
	return series
}

// names returns the metric names of a scrape's series.
func names(series map[string]float64) map[string]bool {
	out := map[string]bool{}
	for s := range series {
		name, _, _ := strings.Cut(s, "{")
		out[name] = true
	}
	return out
}

// hasSeries reports whether a series of the metric has the label.
func hasSeries(series map[string]float64, name, label string) bool {
	for s := range series {
		if strings.HasPrefix(s, name+"{") && strings.Contains(s, label) {
			return true
		}
	}
	return false
}

var exporterBuild struct {
	once      sync.Once
	path, err string
}

// redisExporter returns the path of redis_exporter: $REDIS_EXPORTER if
// set, else exporterVersion built from the Go module proxy once per
// machine (kept in the user's cache). The test skips, saying why, where
// it cannot be built.
func redisExporter(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("REDIS_EXPORTER"); p != "" {
		return p
	}
	exporterBuild.once.Do(func() {
		path, err := buildExporter()
		exporterBuild.path = path
		if err != nil {
			exporterBuild.err = err.Error()
		}
	})
	if exporterBuild.err != "" {
		t.Skipf("redis_exporter %s cannot be built from the Go module proxy (set REDIS_EXPORTER to a binary to run this test): %s", exporterVersion, exporterBuild.err)
	}
	return exporterBuild.path
}

func buildExporter() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "basalt-test", "redis_exporter-"+exporterVersion)
	bin := filepath.Join(dir, "redis_exporter")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "redis-exporter-build")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tmp := filepath.Join(dir, fmt.Sprintf(".redis_exporter-%d", os.Getpid())) // renamed into place: other packages' tests may build it at once
	for _, args := range [][]string{
		{"mod", "init", "exporterbuild"},
		{"get", "github.com/oliver006/redis_exporter@" + exporterVersion},
		{"build", "-o", tmp, "github.com/oliver006/redis_exporter"},
	} {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			os.Remove(tmp)
			return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return bin, os.Rename(tmp, bin)
}
