// Package tlstest runs clients against basalt's TLS port (tls-port):
// redis-cli --tls, go-redis with a tls.Config, mutual TLS, a TLS-only
// server, certificate reloads, encrypted keys, ports moved by CONFIG SET,
// and clusters whose clients use TLS, plain ones beside them. The
// certificates and keys are made by each test.
package tlstest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"basalt/internal/testutil"

	"github.com/redis/go-redis/v9"
)

// certs are a test's certificate files.
type certs struct{ cert, key, ca string }

func newCerts(t *testing.T, name string) certs {
	c := certs{}
	c.cert, c.key, c.ca = testutil.WriteCerts(t, t.TempDir(), name)
	return c
}

// serverArgs are the tls-* arguments of a server with these files.
func (c certs) serverArgs() []string {
	return []string{"--tls-cert-file", c.cert, "--tls-key-file", c.key, "--tls-ca-cert-file", c.ca}
}

// client is a TLS configuration that trusts c's CA and shows c's
// certificate if withCert.
func (c certs) client(t *testing.T, withCert bool) *tls.Config {
	if withCert {
		return testutil.ClientTLS(t, c.ca, c.cert, c.key)
	}
	return testutil.ClientTLS(t, c.ca, "", "")
}

// startTLS starts basalt with a plain port and a TLS port, and returns
// the TLS port's address.
func startTLS(t *testing.T, c certs, args ...string) (*testutil.Proc, string) {
	tlsAddr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	_, port, _ := net.SplitHostPort(tlsAddr)
	p := testutil.StartBasalt(t, "", append(append([]string{"--tls-port", port}, c.serverArgs()...), args...)...)
	return p, tlsAddr
}

func goRedis(t *testing.T, addr string, cfg *tls.Config) *redis.Client {
	rc := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: cfg, MaxRetries: -1, DialTimeout: 5 * time.Second})
	t.Cleanup(func() { rc.Close() })
	return rc
}

// redisCLI runs redis-cli --tls against port and returns its output.
func redisCLI(t *testing.T, port string, tlsArgs []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "redis-cli", append(append([]string{"-h", "127.0.0.1", "-p", port, "--tls"}, tlsArgs...), args...)...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestRedisCLI(t *testing.T) {
	c := newCerts(t, "cli")
	p, tlsAddr := startTLS(t, c)
	_, port, _ := net.SplitHostPort(tlsAddr)
	withCert := []string{"--cacert", c.ca, "--cert", c.cert, "--key", c.key}
	if out, err := redisCLI(t, port, withCert, "SET", "k", "over tls"); err != nil || out != "OK" {
		t.Fatalf("redis-cli --tls SET: %q, %v", out, err)
	}
	if out, _ := redisCLI(t, port, withCert, "GET", "k"); out != "over tls" {
		t.Errorf("redis-cli --tls GET: %q", out)
	}
	// The plain port serves the same data.
	if r := testutil.Dial(t, p.Addr).Do("GET", "k"); r.Str != "over tls" {
		t.Errorf("GET on the plain port: %v", r)
	}
	// tls-auth-clients yes (the default): no certificate, no session.
	if out, err := redisCLI(t, port, []string{"--cacert", c.ca}, "PING"); err == nil && strings.Contains(out, "PONG") {
		t.Errorf("redis-cli without a certificate was served: %q", out)
	}
	// redis-cli trusts only its CA: a server of another CA is refused.
	other := newCerts(t, "other")
	if out, err := redisCLI(t, port, []string{"--cacert", other.ca, "--cert", c.cert, "--key", c.key}, "PING"); err == nil && strings.Contains(out, "PONG") {
		t.Errorf("redis-cli trusted a server its CA did not sign: %q", out)
	}
}

func TestGoRedis(t *testing.T) {
	ctx := context.Background()
	c := newCerts(t, "goredis")
	p, tlsAddr := startTLS(t, c, "--tls-auth-clients", "yes")
	rc := goRedis(t, tlsAddr, c.client(t, true))
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	if v, err := rc.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET over TLS: %q, %v", v, err)
	}
	// go-redis opens with HELLO 3; pipelines and pub/sub go over TLS too.
	pipe := rc.Pipeline()
	for range 100 {
		pipe.Incr(ctx, "n")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := rc.Get(ctx, "n").Int(); n != 100 {
		t.Errorf("n = %d after 100 pipelined INCRs", n)
	}
	sub := rc.Subscribe(ctx, "ch")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rc.Publish(ctx, "ch", "hi").Err(); err != nil {
		t.Fatal(err)
	}
	if msg, err := sub.ReceiveMessage(ctx); err != nil || msg.Payload != "hi" {
		t.Errorf("pub/sub over TLS: %v, %v", msg, err)
	}
	// CLIENT INFO shows the TLS port's socket as any other.
	_, port, _ := net.SplitHostPort(tlsAddr)
	if ci, _ := rc.ClientInfo(ctx).Result(); ci == nil || ci.FD < 0 || !strings.HasSuffix(ci.LAddr, ":"+port) {
		t.Errorf("CLIENT INFO over TLS: %+v", ci)
	}
	// INFO's tcp_port is the plain port while there is one, as Redis's.
	info, _ := rc.Info(ctx, "server").Result()
	if !strings.Contains(info, "tcp_port:"+strconv.Itoa(p.Port)+"\r\n") {
		t.Errorf("INFO server's tcp_port is not %d:\n%s", p.Port, info)
	}
	// The idle timeout closes a TLS client as a plain one.
	conn := rc.Conn()
	defer conn.Close()
	if err := rc.ConfigSet(ctx, "timeout", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.ClientSetName(ctx, "idle").Err(); err != nil {
		t.Fatal(err)
	}
	if list, err := rc.ClientList(ctx).Result(); err != nil || !strings.Contains(list, "name=idle") {
		t.Fatalf("CLIENT LIST before the timeout: %v\n%s", err, list)
	}
	time.Sleep(2500 * time.Millisecond)
	list, err := goRedis(t, tlsAddr, c.client(t, true)).ClientList(ctx).Result()
	if err != nil || strings.Contains(list, "name=idle") {
		t.Errorf("an idle TLS client outlived timeout 1: %v\n%s", err, list)
	}
}

// TestMutualTLS: tls-auth-clients yes refuses a client without a
// certificate, or with one its CA did not sign, and keeps serving
// others; optional takes both; no asks for none.
func TestMutualTLS(t *testing.T) {
	ctx := context.Background()
	c := newCerts(t, "mtls")
	p, tlsAddr := startTLS(t, c)
	// A connection that never starts its handshake holds up no other.
	silent, err := net.DialTimeout("tcp", tlsAddr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if err := goRedis(t, tlsAddr, c.client(t, false)).Ping(ctx).Err(); err == nil {
		t.Fatal("a client without a certificate was served under tls-auth-clients yes")
	}
	stranger := newCerts(t, "stranger")
	cfg := testutil.ClientTLS(t, c.ca, stranger.cert, stranger.key)
	if err := goRedis(t, tlsAddr, cfg).Ping(ctx).Err(); err == nil {
		t.Fatal("a client whose certificate another CA signed was served")
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(readFile(t, p.Log), "TLS handshake failed"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) { // the client may see the refusal before the server logs it
			t.Error("the refused handshakes are not logged")
			break
		}
	}
	admin := goRedis(t, tlsAddr, c.client(t, true))
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatalf("a client with a certificate: %v", err)
	}
	if err := admin.ConfigSet(ctx, "tls-auth-clients", "optional").Err(); err != nil {
		t.Fatal(err)
	}
	if err := goRedis(t, tlsAddr, c.client(t, false)).Ping(ctx).Err(); err != nil {
		t.Errorf("tls-auth-clients optional refused a client without a certificate: %v", err)
	}
	forced := cfg.Clone() // shows its certificate though the server names other CAs
	forced.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cfg.Certificates[0], nil }
	if err := goRedis(t, tlsAddr, forced).Ping(ctx).Err(); err == nil {
		t.Error("tls-auth-clients optional took a certificate another CA signed")
	}
	if err := admin.ConfigSet(ctx, "tls-auth-clients", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := goRedis(t, tlsAddr, c.client(t, false)).Ping(ctx).Err(); err != nil {
		t.Errorf("tls-auth-clients no refused a client: %v", err)
	}
	// A client that speaks no TLS to the TLS port gets nothing it can
	// read as RESP, and the server goes on.
	raw, err := net.DialTimeout("tcp", tlsAddr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw.Write(testutil.Command("PING"))
	raw.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 64)
	n, _ := raw.Read(buf)
	raw.Close()
	if strings.Contains(string(buf[:n]), "PONG") {
		t.Error("the TLS port answered PING in clear")
	}
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Error(err)
	}
}

// TestTLSOnly: port 0 serves clients over TLS only; maxclients refuses
// a TLS client before its handshake, as Redis does.
func TestTLSOnly(t *testing.T) {
	ctx := context.Background()
	c := newCerts(t, "only")
	p := testutil.StartBasaltTLS(t, c.client(t, true), c.serverArgs()...)
	rc := goRedis(t, p.Addr, c.client(t, true))
	cfg, err := rc.ConfigGet(ctx, "*port").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["port"] != "0" || cfg["tls-port"] != strconv.Itoa(p.Port) {
		t.Errorf("CONFIG GET *port: %v", cfg)
	}
	info, _ := rc.Info(ctx, "server").Result()
	if !strings.Contains(info, "tcp_port:"+strconv.Itoa(p.Port)+"\r\n") {
		t.Errorf("INFO server's tcp_port is not the TLS port %d", p.Port)
	}
	if err := rc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// maxclients 1: the clients connected already fill it.
	conn := rc.Conn()
	defer conn.Close()
	if err := conn.ConfigSet(ctx, "maxclients", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if err := goRedis(t, p.Addr, c.client(t, true)).Ping(ctx).Err(); err == nil {
		t.Error("a TLS client beyond maxclients was served")
	}
	if r, _ := conn.Info(ctx, "stats").Result(); strings.Contains(r, "rejected_connections:0\r\n") {
		t.Error("rejected_connections is 0")
	}
	if err := conn.ConfigSet(ctx, "maxclients", "100").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := goRedis(t, p.Addr, c.client(t, true)).Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("GET once maxclients allows it: %q, %v", v, err)
	}
	// MIGRATE to another TLS-only server goes over TLS, as Redis's does
	// between nodes with tls-cluster.
	target := testutil.StartBasaltTLS(t, c.client(t, true), c.serverArgs()...)
	if err := rc.Migrate(ctx, "127.0.0.1", strconv.Itoa(target.Port), "k", 0, 5*time.Second).Err(); err != nil {
		t.Fatalf("MIGRATE over TLS: %v", err)
	}
	if v, err := goRedis(t, target.Addr, c.client(t, true)).Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("the migrated key: %q, %v", v, err)
	}
}

// TestReload: CONFIG SET of the files makes new connections see the new
// certificate, without a restart, while the connections open stay; a
// set that does not load is refused and changes nothing; a file
// replaced on disk is read again for the next handshake.
func TestReload(t *testing.T) {
	ctx := context.Background()
	first := newCerts(t, "first")
	_, tlsAddr := startTLS(t, first)
	old := goRedis(t, tlsAddr, first.client(t, true))
	if err := old.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	held := old.Conn()
	defer held.Close()
	if err := held.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	second := newCerts(t, "second")
	err := held.ConfigSet(ctx, "tls-cert-file", "/nonexistent.crt").Err()
	if err == nil || !strings.Contains(err.Error(), "Unable to update TLS configuration. Check server logs.") {
		t.Fatalf("CONFIG SET of a missing file: %v", err)
	}
	if v, _ := held.ConfigGet(ctx, "tls-cert-file").Result(); v["tls-cert-file"] != first.cert {
		t.Errorf("a refused CONFIG SET changed tls-cert-file to %v", v)
	}
	if err := goRedis(t, tlsAddr, first.client(t, true)).Ping(ctx).Err(); err != nil {
		t.Fatalf("after a refused reload, a new client: %v", err)
	}

	if err := held.Do(ctx, "CONFIG", "SET", "tls-cert-file", second.cert, "tls-key-file", second.key, "tls-ca-cert-file", second.ca).Err(); err != nil {
		t.Fatalf("CONFIG SET of the new files: %v", err)
	}
	if err := held.Ping(ctx).Err(); err != nil {
		t.Errorf("the connection open across the reload: %v", err)
	}
	fresh := goRedis(t, tlsAddr, second.client(t, true))
	if v, err := fresh.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("a new client of the new CA: %q, %v", v, err)
	}
	if state := handshakeState(t, tlsAddr, second.client(t, true)); state.PeerCertificates[0].Subject.CommonName != "second node" {
		t.Errorf("the server shows %q", state.PeerCertificates[0].Subject.CommonName)
	}
	if err := goRedis(t, tlsAddr, first.client(t, true)).Ping(ctx).Err(); err == nil {
		t.Error("a client of the old CA is still served after the reload")
	}

	// New files of a third CA written over the second's: no CONFIG SET.
	third := newCerts(t, "third")
	for from, to := range map[string]string{third.cert: second.cert, third.key: second.key, third.ca: second.ca} {
		if err := os.WriteFile(to, []byte(readFile(t, from)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if state := handshakeState(t, tlsAddr, third.client(t, true)); state.PeerCertificates[0].Subject.CommonName != "third node" {
		t.Errorf("after the files changed, the server shows %q", state.PeerCertificates[0].Subject.CommonName)
	}
}

// handshakeState connects to addr over TLS and returns what the
// handshake showed.
func handshakeState(t *testing.T, addr string, cfg *tls.Config) tls.ConnectionState {
	t.Helper()
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("TLS handshake with %s: %v", addr, err)
	}
	defer tc.Close()
	return tc.ConnectionState()
}

// TestForwardTLS: in a 3-node group whose nodes talk over mutual TLS,
// a TLS client of a follower writes through it: the follower forwards
// to the leader's TLS port, which it announces with tls-cluster.
func TestForwardTLS(t *testing.T) {
	ctx := context.Background()
	c := newCerts(t, "group")
	tlsPorts := make([]int, 3)
	cl := testutil.StartClusterEach(t, 3, func(i int) []string {
		tlsPorts[i] = testutil.FreePort(t)
		return append([]string{"--tls-cluster", "yes", "--tls-port", strconv.Itoa(tlsPorts[i])}, c.serverArgs()...)
	})
	f := cl.Follower(t)
	rc := goRedis(t, "127.0.0.1:"+strconv.Itoa(tlsPorts[f]), c.client(t, true))
	for i := range 20 {
		if err := rc.Set(ctx, fmt.Sprint("k", i), i, 0).Err(); err != nil {
			t.Fatalf("SET through a follower over TLS: %v", err)
		}
	}
	if n, err := rc.Incr(ctx, "n").Result(); err != nil || n != 1 {
		t.Fatalf("INCR through a follower: %d, %v", n, err)
	}
	l := cl.WaitLeader(t, 15*time.Second)
	if r := testutil.Dial(t, cl.Nodes[l].Addr).Do("GET", "k19"); r.Str != "19" {
		t.Errorf("the leader's k19: %v", r)
	}
	cl.WaitConverged(t, 20*time.Second)
}

// TestClusterTLS: a 3-node cluster (cluster-enabled) with tls-cluster
// announces its TLS ports, so a cluster client that uses TLS follows
// CLUSTER SLOTS and MOVED to them; a plain client of one node reaches
// every slot through cluster-proxy, forwarded over TLS.
func TestClusterTLS(t *testing.T) {
	ctx := context.Background()
	c := newCerts(t, "cluster")
	tlsPorts := make([]int, 3)
	cl := testutil.StartClusterEach(t, 3, func(i int) []string {
		tlsPorts[i] = testutil.FreePort(t)
		return append([]string{"--cluster-enabled", "yes", "--cluster-shards", "3", "--cluster-proxy", "yes",
			"--tls-cluster", "yes", "--tls-port", strconv.Itoa(tlsPorts[i])}, c.serverArgs()...)
	})
	cl.WaitBalanced(t, 20*time.Second, 1) // no leader moves during the test
	seed := "127.0.0.1:" + strconv.Itoa(tlsPorts[0])

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{seed}, TLSConfig: c.client(t, true), MaxRedirects: 8})
	t.Cleanup(func() { cc.Close() })
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		for _, n := range s.Nodes {
			_, p, _ := net.SplitHostPort(n.Addr)
			if port, _ := strconv.Atoi(p); !slices.Contains(tlsPorts, port) {
				t.Errorf("CLUSTER SLOTS gives %s, not a TLS port %v", n.Addr, tlsPorts)
			}
		}
	}
	const keys = 60
	for i := range keys {
		if err := cc.Set(ctx, fmt.Sprint("key:", i), i, 0).Err(); err != nil {
			t.Fatalf("cluster client SET over TLS: %v", err)
		}
	}
	// A client of one node, not cluster-aware: the others' slots are
	// proxied over TLS.
	one := goRedis(t, "127.0.0.1:"+strconv.Itoa(tlsPorts[1]), c.client(t, true))
	for i := range keys {
		if v, err := one.Get(ctx, fmt.Sprint("key:", i)).Int(); err != nil || v != i {
			t.Fatalf("GET key:%d through node 2's proxy: %d, %v", i, v, err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConfigDiff: the tls-* settings' CONFIG GET and SET, checks and
// errors included, against redis-server with TLS on the same files.
func TestConfigDiff(t *testing.T) {
	c := newCerts(t, "diff")
	args := func() []string {
		return append([]string{"--tls-port", strconv.Itoa(testutil.FreePort(t))}, c.serverArgs()...)
	}
	redisSrv := testutil.StartRedis(t, args()...)
	basalt := testutil.StartBasalt(t, "", args()...)
	d := testutil.NewDiff(t, redisSrv.Addr, basalt.Addr)
	d.Run(fmt.Sprintf(`
		@unordered CONFIG GET tls-*file
		CONFIG GET tls-auth-clients
		CONFIG GET tls-protocols
		CONFIG GET tls-ciphers
		CONFIG GET tls-ca-cert-dir
		CONFIG GET tls-session-caching
		CONFIG SET tls-protocols bogus
		CONFIG SET tls-protocols "TLSv1.2 TLSv1.3 TLSv2"
		CONFIG GET tls-protocols
		CONFIG SET tls-protocols "TLSv1.2 TLSv1.3"
		CONFIG GET tls-protocols
		CONFIG SET tls-cert-file /nonexistent.crt
		CONFIG GET tls-cert-file
		CONFIG SET tls-key-file /nonexistent.key
		CONFIG SET tls-ca-cert-dir /nonexistent
		CONFIG SET tls-ciphers bogus
		CONFIG SET tls-ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384
		CONFIG SET tls-ciphersuites bogus
		CONFIG SET tls-ciphersuites TLS_AES_256_GCM_SHA384
		CONFIG SET tls-ca-cert-file ""
		CONFIG SET tls-auth-clients no
		CONFIG SET tls-ca-cert-file ""
		CONFIG SET tls-ca-cert-file %s
		CONFIG SET tls-auth-clients optional
		CONFIG SET tls-auth-clients maybe
		CONFIG SET tls-session-caching no
		CONFIG SET tls-prefer-server-ciphers yes
		CONFIG SET tls-cert-file %s tls-key-file %s
	`, c.ca, c.cert, c.key))
}

// TestCADir: tls-ca-cert-dir trusts every CA file in the directory, and a
// CA added there is trusted from the next handshake on.
func TestCADir(t *testing.T) {
	ctx := context.Background()
	c, stranger := newCerts(t, "dir"), newCerts(t, "stranger")
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/dir.pem", []byte(readFile(t, c.ca)), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsAddr := "127.0.0.1:" + strconv.Itoa(testutil.FreePort(t))
	_, port, _ := net.SplitHostPort(tlsAddr)
	testutil.StartBasalt(t, "", "--tls-port", port, "--tls-cert-file", c.cert, "--tls-key-file", c.key, "--tls-ca-cert-dir", dir)
	if err := goRedis(t, tlsAddr, c.client(t, true)).Ping(ctx).Err(); err != nil {
		t.Fatalf("a client whose CA is in tls-ca-cert-dir: %v", err)
	}
	strangerCfg := testutil.ClientTLS(t, c.ca, stranger.cert, stranger.key)
	if err := goRedis(t, tlsAddr, strangerCfg).Ping(ctx).Err(); err == nil {
		t.Fatal("a client whose CA is not in tls-ca-cert-dir was served")
	}
	if err := os.WriteFile(dir+"/stranger.pem", []byte(readFile(t, stranger.ca)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := goRedis(t, tlsAddr, strangerCfg).Ping(ctx).Err(); err != nil {
		t.Errorf("a client whose CA was added to tls-ca-cert-dir: %v", err)
	}
}

// TestProtocolsAndCiphers: tls-protocols, tls-ciphers and
// tls-session-caching take effect for the next handshakes.
func TestProtocolsAndCiphers(t *testing.T) {
	ctx := context.Background()
	c := newCerts(t, "proto")
	p, tlsAddr := startTLS(t, c)
	admin := testutil.Dial(t, p.Addr)
	tls12 := c.client(t, true)
	tls12.MaxVersion = tls.VersionTLS12

	if r := admin.Do("CONFIG", "SET", "tls-protocols", "TLSv1.3"); r.String() != "+OK" {
		t.Fatal(r)
	}
	if err := goRedis(t, tlsAddr, tls12).Ping(ctx).Err(); err == nil {
		t.Error("a TLS 1.2 client was served under tls-protocols TLSv1.3")
	}
	if v := handshakeState(t, tlsAddr, c.client(t, true)).Version; v != tls.VersionTLS13 {
		t.Errorf("version %x under tls-protocols TLSv1.3", v)
	}

	if r := admin.Do("CONFIG", "SET", "tls-protocols", "TLSv1.2", "tls-ciphers", "ECDHE-ECDSA-AES256-GCM-SHA384"); r.String() != "+OK" {
		t.Fatal(r)
	}
	if v := handshakeState(t, tlsAddr, c.client(t, true)).Version; v != tls.VersionTLS12 {
		t.Errorf("version %x under tls-protocols TLSv1.2", v)
	}
	if cs := handshakeState(t, tlsAddr, tls12).CipherSuite; cs != tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 {
		t.Errorf("cipher suite %s, not the one tls-ciphers names", tls.CipherSuiteName(cs))
	}
	other := tls12.Clone()
	other.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
	if err := goRedis(t, tlsAddr, other).Ping(ctx).Err(); err == nil {
		t.Error("a client without the suite tls-ciphers names was served")
	}

	// Session resumption: on by default, off with tls-session-caching no.
	if r := admin.Do("CONFIG", "SET", "tls-protocols", "", "tls-ciphers", ""); r.String() != "+OK" {
		t.Fatal(r)
	}
	resumed := func() bool {
		cfg := c.client(t, true)
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		var last bool
		for range 2 {
			tc, err := tls.Dial("tcp", tlsAddr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			tc.Write(testutil.Command("PING")) // the reply brings the session ticket
			tc.SetReadDeadline(time.Now().Add(5 * time.Second))
			tc.Read(make([]byte, 16))
			last = tc.ConnectionState().DidResume
			tc.Close()
		}
		return last
	}
	if !resumed() {
		t.Error("no session was resumed under tls-session-caching yes")
	}
	if r := admin.Do("CONFIG", "SET", "tls-session-caching", "no"); r.String() != "+OK" {
		t.Fatal(r)
	}
	if resumed() {
		t.Error("a session was resumed under tls-session-caching no")
	}
}

// TestClusterBothPorts: in a 3-node cluster whose nodes have a plain port
// and a TLS port, each client is given the ports of its own kind, as
// Redis Cluster gives port or pport: CLUSTER SLOTS, NODES and MOVED give
// a plain client plain ports and a TLS client TLS ports, and CLUSTER
// SHARDS lists both; redis-cli -c, plain and --tls, follows MOVED to
// them. With tls-cluster yes this is Redis 7.0's behaviour; without it
// Redis 7.0 gives TLS clients plain ports, which basalt does not
// (docs/security.md).
func TestClusterBothPorts(t *testing.T) {
	for _, tlsCluster := range []string{"yes", "no"} {
		t.Run("tls-cluster="+tlsCluster, func(t *testing.T) {
			c := newCerts(t, "both")
			tlsPorts := make([]int, 3)
			cl := testutil.StartClusterEach(t, 3, func(i int) []string {
				tlsPorts[i] = testutil.FreePort(t)
				return append([]string{"--cluster-enabled", "yes", "--cluster-shards", "3",
					"--tls-cluster", tlsCluster, "--tls-port", strconv.Itoa(tlsPorts[i])}, c.serverArgs()...)
			})
			cl.WaitBalanced(t, 20*time.Second, 1) // no leader moves during the test
			plainPorts := make([]int, 3)
			for i, n := range cl.Nodes {
				plainPorts[i] = n.Port
			}
			plain := goRedis(t, cl.Nodes[0].Addr, nil)
			secure := goRedis(t, "127.0.0.1:"+strconv.Itoa(tlsPorts[0]), c.client(t, true))
			checkPorts(t, "plain", plain, plainPorts)
			checkPorts(t, "TLS", secure, tlsPorts)
			checkShards(t, plain, plainPorts, tlsPorts)
			checkShards(t, secure, plainPorts, tlsPorts)

			// redis-cli -c, plain and TLS, sets and reads keys of every
			// node's slots through node 0, redirected to the right ports.
			tlsArgs := []string{"--tls", "--cacert", c.ca, "--cert", c.cert, "--key", c.key}
			for _, cli := range []struct {
				name  string
				port  int
				args  []string
				ports []int
			}{{"plain", plainPorts[0], nil, plainPorts}, {"TLS", tlsPorts[0], tlsArgs, tlsPorts}} {
				var script strings.Builder
				for i := range 12 {
					fmt.Fprintf(&script, "SET %s-%d v%d\nGET %s-%d\n", cli.name, i, i, cli.name, i)
				}
				out := clusterCLI(t, cli.port, cli.args, script.String())
				for i := range 12 {
					if !strings.Contains(out, fmt.Sprintf("\nv%d\n", i)) && !strings.HasPrefix(out, fmt.Sprintf("v%d\n", i)) {
						t.Errorf("%s redis-cli -c: no GET of %s-%d in %q", cli.name, cli.name, i, out)
					}
				}
				redirects := 0
				for _, line := range strings.Split(out, "\n") {
					if !strings.HasPrefix(line, "-> Redirected to slot") {
						continue
					}
					redirects++
					_, p, _ := net.SplitHostPort(line[strings.LastIndex(line, " ")+1:])
					if port, _ := strconv.Atoi(p); !slices.Contains(cli.ports, port) {
						t.Errorf("%s redis-cli -c redirected to %q, not one of %v", cli.name, line, cli.ports)
					}
				}
				if redirects == 0 {
					t.Errorf("%s redis-cli -c was never redirected: %q", cli.name, out)
				}
			}
		})
	}
}

// checkPorts checks that CLUSTER SLOTS, CLUSTER NODES and MOVED give a
// client (of node 0) the ports of its kind: ports[i] for node i+1.
func checkPorts(t *testing.T, kind string, rc *redis.Client, ports []int) {
	t.Helper()
	ctx := context.Background()
	want := func(what, addr string) {
		t.Helper()
		_, p, _ := net.SplitHostPort(addr)
		if port, _ := strconv.Atoi(p); !slices.Contains(ports, port) {
			t.Errorf("%s: %s gives a %s client %s, not one of %v", kind, what, kind, addr, ports)
		}
	}
	slots, err := rc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		for _, n := range s.Nodes {
			want("CLUSTER SLOTS", n.Addr)
		}
	}
	nodes, err := rc.ClusterNodes(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		addr, _, _ := strings.Cut(strings.Fields(line)[1], "@")
		want("CLUSTER NODES", addr)
	}
	moved := 0
	for i := 0; i < 30 && moved < 3; i++ {
		err := rc.Get(ctx, fmt.Sprint("moved-", i)).Err()
		if err == nil || err == redis.Nil {
			continue // a key of node 0's slots
		}
		f := strings.Fields(err.Error())
		if len(f) != 3 || f[0] != "MOVED" {
			t.Fatalf("%s: GET of another node's key: %v", kind, err)
		}
		want("MOVED", f[2])
		moved++
	}
	if moved == 0 {
		t.Errorf("%s: no key of 30 was another node's", kind)
	}
}

// checkShards checks that CLUSTER SHARDS gives any client both ports of
// every node, as Redis does in a TLS cluster: plain[i] and tls[i] together.
func checkShards(t *testing.T, rc *redis.Client, plain, tls []int) {
	t.Helper()
	shards, err := rc.ClusterShards(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range shards {
		for _, n := range s.Nodes {
			i := slices.Index(plain, int(n.Port))
			if i < 0 || int(n.TLSPort) != tls[i] {
				t.Errorf("CLUSTER SHARDS gives node %s port %d and tls-port %d, not a pair of %v and %v", n.ID, n.Port, n.TLSPort, plain, tls)
			}
		}
	}
}

// clusterCLI runs redis-cli -c against port with args, the commands of
// script on its input, and returns its output.
func clusterCLI(t *testing.T, port int, args []string, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "redis-cli", append([]string{"-c", "-h", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)...)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli -c: %v: %s", err, out)
	}
	return string(out)
}
