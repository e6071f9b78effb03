package tlstest

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"basalt/internal/testutil"
)

// serves reports whether a new client of addr gets PONG, over TLS with
// c's certificate if secure.
func serves(t *testing.T, addr string, secure bool, c certs) bool {
	t.Helper()
	if secure {
		return goRedis(t, addr, c.client(t, true)).Ping(context.Background()).Err() == nil
	}
	conn, err := testutil.DialErr(addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	r, err := conn.DoErr("PING")
	return err == nil && r.Str == "PONG"
}

// occupied is a port another listener holds for the test.
func occupied(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// TestConfigSetPorts: CONFIG SET port and tls-port move the listeners at
// runtime, as Redis's do: tls-port configures TLS when it was off, the
// connections open stay, a port that cannot be bound is refused with
// Redis's error and the old listener stays, a set refused for another
// setting moves nothing, and port 0 closes the listener.
func TestConfigSetPorts(t *testing.T) {
	c := newCerts(t, "ports")
	p := testutil.StartBasalt(t, "", c.serverArgs()...) // TLS off: no tls-port
	admin := testutil.Dial(t, p.Addr)
	set := func(args ...string) string {
		t.Helper()
		return admin.Do(append([]string{"CONFIG", "SET"}, args...)...).String()
	}
	addr := func(port string) string { return "127.0.0.1:" + port }

	tlsPort := strconv.Itoa(testutil.FreePort(t))
	if r := set("tls-port", tlsPort); r != "+OK" {
		t.Fatalf("CONFIG SET tls-port while TLS is off: %s", r)
	}
	if !serves(t, addr(tlsPort), true, c) {
		t.Fatal("no TLS client served on the new tls-port")
	}
	busy := occupied(t)
	if r := set("tls-port", busy); !strings.Contains(r, "ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen on this port. Check server logs.") {
		t.Errorf("CONFIG SET tls-port to a port in use: %s", r)
	}
	if r := admin.Do("CONFIG", "GET", "tls-port"); r.Elems[1].Str != tlsPort || !serves(t, addr(tlsPort), true, c) {
		t.Errorf("after the refused set, tls-port is %v and serves: %v", r, serves(t, addr(tlsPort), true, c))
	}

	port := strconv.Itoa(testutil.FreePort(t))
	if r := set("port", port); r != "+OK" {
		t.Fatalf("CONFIG SET port: %s", r)
	}
	if !serves(t, addr(port), false, c) {
		t.Error("no client served on the new port")
	}
	if serves(t, p.Addr, false, c) {
		t.Error("the old port still serves")
	}
	if r := admin.Do("PING"); r.Str != "PONG" {
		t.Errorf("the connection opened on the old port: %v", r)
	}
	if info := admin.Do("INFO", "server").Str; !strings.Contains(info, "tcp_port:"+port+"\r\n") {
		t.Error("INFO's tcp_port is not the new port")
	}
	if r := set("port", busy); !strings.Contains(r, "argument 'port') - Unable to listen on this port") {
		t.Errorf("CONFIG SET port to a port in use: %s", r)
	}
	// A set refused for another of its settings moves no listener.
	other := strconv.Itoa(testutil.FreePort(t))
	if r := set("port", other, "tls-cert-file", "/nonexistent.crt"); !strings.Contains(r, "Unable to update TLS configuration") {
		t.Errorf("CONFIG SET port with a bad tls-cert-file: %s", r)
	}
	if !serves(t, addr(port), false, c) || serves(t, addr(other), false, c) {
		t.Error("a refused CONFIG SET moved the port")
	}
	// Both at once, and back to no TLS.
	port2, tlsPort2 := strconv.Itoa(testutil.FreePort(t)), strconv.Itoa(testutil.FreePort(t))
	if r := set("port", port2, "tls-port", tlsPort2); r != "+OK" {
		t.Fatalf("CONFIG SET port and tls-port: %s", r)
	}
	if !serves(t, addr(port2), false, c) || !serves(t, addr(tlsPort2), true, c) || serves(t, addr(tlsPort), true, c) {
		t.Error("the listeners did not both move")
	}
	if r := set("tls-port", "0"); r != "+OK" || serves(t, addr(tlsPort2), true, c) {
		t.Errorf("CONFIG SET tls-port 0: %s, or the TLS port still serves", r)
	}
}

// TestConfigSetPortsDiff: the errors of CONFIG SET port and tls-port,
// against redis-server: a port in use, and tls-port without certificates.
func TestConfigSetPortsDiff(t *testing.T) {
	redisSrv, basalt := testutil.StartRedis(t), testutil.StartBasalt(t, "")
	d := testutil.NewDiff(t, redisSrv.Addr, basalt.Addr)
	busy := occupied(t)
	d.Do("CONFIG", "SET", "port", busy)
	d.Do("CONFIG", "SET", "tls-port", busy)
	d.Do("CONFIG", "SET", "tls-port", strconv.Itoa(testutil.FreePort(t)))
	d.Do("CONFIG", "SET", "port", "65536")
	d.Do("PING")
}

// TestConfigSetPortsRaft: a node with peers keeps its client ports, which
// they learned when they connected.
func TestConfigSetPortsRaft(t *testing.T) {
	cl := testutil.StartCluster(t, 1)
	admin := testutil.Dial(t, cl.Nodes[0].Addr)
	r := admin.Do("CONFIG", "SET", "port", strconv.Itoa(testutil.FreePort(t)))
	if !strings.Contains(r.Str, "a node with a raft-addr keeps its client ports") {
		t.Errorf("CONFIG SET port on a node with a raft-addr: %v", r)
	}
	if !serves(t, cl.Nodes[0].Addr, false, certs{}) {
		t.Error("the node no longer serves on its port")
	}
}
