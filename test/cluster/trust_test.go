package cluster

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"basalt/internal/testutil"
	"basalt/internal/transport"

	"go.etcd.io/raft/v3/raftpb"
)

// What a node trusts (docs/replication.md): the Raft port is attacked as
// a stranger would, on a cluster with a secret.

const testSecret = "a cluster secret for the tests"

// forgedHello is what a stranger sends to open a Raft connection
// (transport/auth.go): it claims to be node from, then answers the
// challenge with a guess.
func forgedHello(from, to uint64, advertise string) []byte {
	b := []byte("bRt3")
	for _, v := range []uint64{from, to, 0} {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	b = append(b, make([]byte, 32)...) // nonce
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(len(advertise)))
	b = append(b, advertise...)
	return b
}

func frame(m raftpb.Message) []byte {
	data, err := m.Marshal()
	if err != nil {
		panic(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(data))), data...)
}

// attack sends payload to a Raft address and reports whether the node
// closed the connection within a few seconds (it reads everything the
// node sends first).
func attack(t *testing.T, addr string, payload ...[]byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		for _, p := range payload {
			if _, err := c.Write(p); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil && !isReset(err) {
		t.Fatalf("the node kept a stranger's connection open: %v", err)
	}
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// procStatus reads a field of /proc/PID/status, in kB.
func procStatus(t *testing.T, pid int, field string) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

func openFiles(pid int) int {
	fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	return len(fds)
}

// TestRaftPortAttacks: a forged header (a follower told the leader is the
// attacker), a forged MsgApp, a forged heartbeat with a high term, an
// oversized frame and a connection flood at a follower's Raft port are
// all refused, while a client writes through the leader without an
// error; the replicas end equal and the injected key is nowhere.
func TestRaftPortAttacks(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-secret", testSecret)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	leaderID, followerID := uint64(l+1), uint64(f+1)
	target := c.RaftAdr[f]
	before := testutil.Status(c.Nodes[f].Addr)

	start := time.Now()
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := testutil.Dial(t, c.Nodes[f].Addr) // forwarded to the leader
		for i := 0; i < 100000; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if r := w.Do("SET", "w"+strconv.Itoa(i%100), strconv.Itoa(i)); r.String() == "+OK" {
				ok.Add(1)
			} else {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, r.String())
			}
		}
	}()

	term, _ := strconv.ParseUint(before["term"], 10, 64)
	heartbeat := raftpb.Message{Type: raftpb.MsgHeartbeat, From: leaderID, To: followerID, Term: term + 100, Commit: 1 << 40}
	forgedApp := raftpb.Message{Type: raftpb.MsgApp, From: 99, To: followerID, Term: term, Index: 1 << 30, LogTerm: term, Commit: 1<<30 + 1,
		Entries: []raftpb.Entry{{Term: term, Index: 1<<30 + 1, Data: []byte("SET injected by-a-stranger")}}}
	guess := make([]byte, 32)

	// A forged header: the leader's ID and the attacker's client address.
	attack(t, target, forgedHello(leaderID, followerID, "127.0.0.1:1"), guess, frame(heartbeat))
	// A forged MsgApp from an unknown ID, and one under the leader's ID.
	attack(t, target, forgedHello(99, followerID, ""), guess, frame(forgedApp))
	forgedApp.From = leaderID
	attack(t, target, forgedHello(leaderID, followerID, ""), guess, frame(forgedApp))
	// Ten heartbeats with a term 100 higher.
	for range 10 {
		attack(t, target, forgedHello(leaderID, followerID, ""), guess, frame(heartbeat))
	}
	// Oversized frames: twenty connections announcing 64 MB and sending 8.
	big := make([]byte, 8<<20)
	var bw sync.WaitGroup
	for range 20 {
		bw.Add(1)
		go func() {
			defer bw.Done()
			attack(t, target, forgedHello(leaderID, followerID, ""), guess, binary.BigEndian.AppendUint32(nil, 64<<20), big)
		}()
	}
	bw.Wait()
	// A flood: 2,000 connections that open a handshake and wait.
	var flood []net.Conn
	for range 2000 {
		fc, err := net.Dial("tcp", target)
		if err != nil {
			break // the test process's own descriptors
		}
		fc.Write([]byte("bRt3"))
		flood = append(flood, fc)
	}
	pid := c.Nodes[f].Pid()
	deadline := time.Now().Add(10 * time.Second)
	for openFiles(pid) > 300 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := openFiles(pid); n > 300 {
		t.Errorf("a flood of %d connections holds %d of the follower's descriptors", len(flood), n)
	}
	time.Sleep(time.Second) // writes go on during the flood
	for _, fc := range flood {
		fc.Close()
	}
	close(stop)
	wg.Wait()

	// A forged heartbeat would have raised the term by 100. A real
	// election (a loaded machine can delay heartbeats) raises it by a
	// little, and writes fail while it runs; without one, none may fail.
	after := testutil.Status(c.Nodes[f].Addr)
	termAfter, _ := strconv.ParseUint(after["term"], 10, 64)
	switch {
	case termAfter >= term+100:
		t.Errorf("the term went from %d to %d", term, termAfter)
	case termAfter == term && (failed.Load() > 0 || ok.Load() == 0):
		t.Errorf("writes during the attacks: %d ok, %d failed (first: %v)", ok.Load(), failed.Load(), firstErr.Load())
	case termAfter != term:
		t.Logf("an election happened under load (term %d to %d); %d writes failed meanwhile", term, termAfter, failed.Load())
	}
	l = c.WaitLeader(t, 15*time.Second)
	if st := testutil.Status(c.Nodes[f].Addr); !strings.Contains(st["node_"+strconv.Itoa(l+1)], "client_addr="+c.Nodes[l].Addr) {
		t.Errorf("the follower's view of the leader: %v", st)
	}
	expect(t, testutil.Dial(t, c.Nodes[f].Addr).Do("SET", "after", "1"), "+OK")
	if hwm := procStatus(t, pid, "VmHWM"); hwm > 512<<10 {
		t.Errorf("the follower's peak RSS is %d MB", hwm>>10)
	}
	c.WaitConverged(t, 20*time.Second)
	for i, p := range c.Nodes {
		conn := testutil.Dial(t, p.Addr)
		expect(t, conn.Do("READONLY"), "+OK")
		if r := conn.Do("KEYS", "injected*"); r.String() != "[]" {
			t.Errorf("node %d: KEYS injected* = %s", i+1, r)
		}
	}
	t.Logf("%d writes during the attacks (%d failed); follower's peak RSS %d MB; took %v", ok.Load(), failed.Load(), procStatus(t, pid, "VmHWM")>>10, time.Since(start))
}

// TestSecretMismatch: a node with another secret cannot take part; once
// restarted with the cluster's secret it catches up.
func TestSecretMismatch(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-secret", testSecret)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	c.Nodes[f].Stop()
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	expect(t, leader.Do("SET", "while-away", "1"), "+OK")
	// Restarted with another secret: Restart reuses the arguments, so
	// start its directory with them changed.
	p := c.Nodes[f]
	args := append([]string(nil), p.Cmd.Args[1:]...)
	for i := range args {
		if args[i] == testSecret {
			args[i] = "not the cluster's secret!"
		}
	}
	stranger := exec.Command(p.Cmd.Path, args...)
	var out bytes.Buffer
	stranger.Stdout, stranger.Stderr = &out, &out
	if err := stranger.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	st := testutil.Status(p.Addr)
	stranger.Process.Kill()
	stranger.Wait()
	if st == nil || st["applied_index"] == testutil.Status(c.Nodes[l].Addr)["applied_index"] {
		t.Fatalf("a node with another secret caught up: %v\n%s", st, out.String())
	}
	if !strings.Contains(out.String(), "authentication failed") {
		t.Errorf("the node's log does not say why:\n%s", out.String())
	}
	p.Restart(t)
	c.WaitConverged(t, 20*time.Second)
}

// TestDataDirIdentity: a data directory started as another node, or with
// another --initial-cluster, refuses to start and names both; a Raft
// port beyond loopback needs a secret.
func TestDataDirIdentity(t *testing.T) {
	c := testutil.StartCluster(t, 3)
	c.Nodes[1].Stop()
	dir := c.Nodes[1].Dir
	run := func(want string, args ...string) {
		t.Helper()
		cmd := exec.Command(testutil.BasaltBinary(t), append([]string{"--port", strconv.Itoa(testutil.FreePort(t)), "--dir", dir}, args...)...)
		done := make(chan []byte, 1)
		go func() {
			out, _ := cmd.CombinedOutput()
			done <- out
		}()
		select {
		case out := <-done:
			if !strings.Contains(string(out), want) {
				t.Errorf("basalt %s: %s\nwant %q", strings.Join(args, " "), out, want)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("basalt %s started", strings.Join(args, " "))
		}
	}
	members := "1=" + c.RaftAdr[0] + ",2=" + c.RaftAdr[1] + ",3=" + c.RaftAdr[2]
	run(fmt.Sprintf("the data directory %s belongs to node 2 of cluster ", dir),
		"--node-id", "3", "--raft-addr", c.RaftAdr[1], "--initial-cluster", members)
	run("not node 3: start it with --node-id 2, or give node 3 an empty directory",
		"--node-id", "3", "--raft-addr", c.RaftAdr[1], "--initial-cluster", members)
	run("but --initial-cluster names cluster ",
		"--node-id", "2", "--raft-addr", c.RaftAdr[1], "--initial-cluster", members+",4=127.0.0.1:1")
	run("--raft-addr 0.0.0.0:1 is not a loopback address and no cluster secret is set",
		"--node-id", "2", "--raft-addr", "0.0.0.0:1", "--initial-cluster", members)
	run("the cluster secret must be at least 16 characters", "--cluster-secret", "short")
	c.Nodes[1].Restart(t)
	c.WaitConverged(t, 20*time.Second)

	// A lone server's directory has a node ID too.
	lone := testutil.StartBasalt(t, "")
	lone.Stop()
	dir = lone.Dir
	run("belongs to node 1 of cluster 0000000000000000, not node 2", "--node-id", "2")
}

// netns is a network namespace with a veth pair: the test reaches
// hostIP from inside it, from nsIP, a non-loopback address.
type netns struct{ name, hostIP, nsIP string }

func newNetns(t *testing.T) *netns {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	pid := os.Getpid()
	n := &netns{name: fmt.Sprintf("basalt-t%d", pid),
		hostIP: fmt.Sprintf("10.%d.%d.1", 200+pid%50, pid/50%250), nsIP: fmt.Sprintf("10.%d.%d.2", 200+pid%50, pid/50%250)}
	veth := fmt.Sprintf("bt%d", pid)
	steps := [][]string{
		{"netns", "add", n.name},
		{"link", "add", veth, "type", "veth", "peer", "name", veth + "n"},
		{"link", "set", veth + "n", "netns", n.name},
		{"addr", "add", n.hostIP + "/30", "dev", veth},
		{"link", "set", veth, "up"},
		{"netns", "exec", n.name, "ip", "addr", "add", n.nsIP + "/30", "dev", veth + "n"},
		{"netns", "exec", n.name, "ip", "link", "set", veth + "n", "up"},
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", n.name).Run()
		exec.Command("ip", "link", "del", veth).Run()
	})
	for _, s := range steps {
		if out, err := exec.Command("ip", s...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(s, " "), err, out)
		}
	}
	return n
}

// send connects from inside the namespace to addr, sends payload and
// returns everything the server answers until it closes the connection
// (or a second passes).
func (n *netns) send(t *testing.T, addr, payload string) string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	script := `import socket,sys
s=socket.create_connection((sys.argv[1],int(sys.argv[2])),5)
s.settimeout(1)
s.sendall(sys.argv[3].encode())
out=b""
try:
    while True:
        b=s.recv(65536)
        if not b: break
        out+=b
except (socket.timeout, ConnectionResetError):
    pass
sys.stdout.buffer.write(out)`
	out, err := exec.Command("ip", "netns", "exec", n.name, "python3", "-c", script, host, port, payload).CombinedOutput()
	if err != nil {
		t.Fatalf("connecting from %s to %s: %v: %s", n.nsIP, addr, err, out)
	}
	return string(out)
}

// TestProtectedMode: bound beyond loopback with no password, basalt
// answers a client from another address exactly as redis-server 7.0
// does, and closes the connection; a password or protected-mode no lets
// it in, and loopback clients are always served.
func TestProtectedMode(t *testing.T) {
	n := newNetns(t)
	redis := testutil.StartRedis(t, "--bind", n.hostIP+" 127.0.0.1")
	basalt := testutil.StartBasalt(t, "", "--bind", "0.0.0.0")
	at := func(p *testutil.Proc) string { return net.JoinHostPort(n.hostIP, strconv.Itoa(p.Port)) }

	// Nothing is sent: the server's close must not race a PING unread.
	want := n.send(t, at(redis), "")
	if !strings.HasPrefix(want, "-DENIED Redis is running in protected mode") {
		t.Fatalf("redis-server answered %q", want)
	}
	if got := n.send(t, at(basalt), ""); got != want {
		t.Fatalf("basalt answered\n%q\nredis-server\n%q", got, want)
	}
	local := testutil.Dial(t, basalt.Addr)
	expect(t, local.Do("CONFIG", "GET", "protected-mode"), `["protected-mode", "yes"]`)
	if info := local.Do("INFO", "stats").Str; !strings.Contains(info, "rejected_connections:1\r\n") {
		t.Errorf("INFO stats after a refusal:\n%s", info)
	}
	expect(t, local.Do("CONFIG", "SET", "requirepass", "pw"), "+OK")
	if got := n.send(t, at(basalt), "PING\r\n"); got != "-NOAUTH Authentication required.\r\n" {
		t.Errorf("with a password: %q", got)
	}
	expect(t, local.Do("CONFIG", "SET", "requirepass", "", "protected-mode", "no"), "+OK")
	if got := n.send(t, at(basalt), "PING\r\n"); got != "+PONG\r\n" {
		t.Errorf("with protected-mode no: %q", got)
	}
}

// TestBadEntry: an entry that is not a basalt record can only come from a
// node with the secret (here the test, posing as the leader). The
// follower that commits it stops applying and refuses writes with a
// logged error that says what to do, the rest of the cluster keeps
// writing, and the operator's remedy (remove it, re-add it empty) works.
func TestBadEntry(t *testing.T) {
	c := testutil.StartCluster(t, 3, "--cluster-secret", testSecret)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	expect(t, leader.Do("SET", "before", "1"), "+OK")
	c.WaitConverged(t, 20*time.Second)
	st := testutil.Status(c.Nodes[f].Addr)
	term, _ := strconv.ParseUint(st["term"], 10, 64)
	last, _ := strconv.ParseUint(st["log_last_index"], 10, 64)

	rogue := &transport.Transport{ID: uint64(l + 1), Addr: "127.0.0.1:0", Secret: []byte(testSecret)}
	if err := rogue.Start(func(raftpb.Message) {}); err != nil {
		t.Fatal(err)
	}
	defer rogue.Stop()
	rogue.AddPeer(uint64(f+1), c.RaftAdr[f])
	bad := []byte("\x07 not a basalt record")
	rogue.Send([]raftpb.Message{{Type: raftpb.MsgApp, From: uint64(l + 1), To: uint64(f + 1), Term: term,
		Index: last, LogTerm: term, Commit: last + 1, Entries: []raftpb.Entry{{Term: term, Index: last + 1, Data: bad}}}})

	want := fmt.Sprintf("raft entry %d (term %d) is not a basalt record", last+1, term)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(readLog(t, c.Nodes[f]), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the follower's log does not say %q", want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(readLog(t, c.Nodes[f]), "RAFT REMOVE it on the leader, then start it with an empty directory and --join yes, and RAFT ADD it") {
		t.Errorf("the log does not say what to do")
	}
	follower := testutil.Dial(t, c.Nodes[f].Addr)
	if r := follower.Do("SET", "k", "v"); !r.IsError() {
		t.Errorf("the stopped follower took a write: %s", r)
	}
	if info := follower.Do("INFO", "persistence").Str; !strings.Contains(info, "aof_last_write_status:err") {
		t.Errorf("INFO persistence does not show the failure:\n%s", info)
	}
	for i := range 20 {
		expect(t, leader.Do("SET", "after", strconv.Itoa(i)), "+OK")
	}

	// The remedy.
	expect(t, leader.Do("RAFT", "REMOVE", strconv.Itoa(f+1)), "+OK")
	c.Nodes[f].Stop()
	p, addr := c.Join(t, f+1, "--cluster-secret", testSecret)
	expect(t, leader.Do("RAFT", "ADD", strconv.Itoa(f+1), addr), "+OK")
	c.Nodes[f] = p
	c.WaitConverged(t, 30*time.Second)
	expect(t, testutil.Dial(t, p.Addr).Do("SET", "k", "v"), "+OK")
}

func readLog(t *testing.T, p *testutil.Proc) string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestClusterTLS: a cluster whose nodes talk over mutual TLS (tls-cluster
// yes, no secret) replicates; a peer whose certificate another CA signed,
// and one that does not speak TLS, are refused; certificates replaced in
// place are taken without a restart.
func TestClusterTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key, ca := testutil.WriteCerts(t, dir, "cluster")
	c := testutil.StartCluster(t, 3, "--tls-cluster", "yes", "--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca)
	l := c.WaitLeader(t, 15*time.Second)
	f := c.Follower(t)
	leader := testutil.Dial(t, c.Nodes[l].Addr)
	expect(t, leader.Do("SET", "k", "v"), "+OK")
	expect(t, testutil.Dial(t, c.Nodes[f].Addr).Do("INCR", "n"), ":1") // forwarded
	before := testutil.Status(c.Nodes[f].Addr)

	// A stranger with its own CA, posing as the leader; then one in clear.
	oCert, oKey, oCA := testutil.WriteCerts(t, dir, "other")
	serverTLS, clientTLS := mutualTLS(t, oCert, oKey, oCA)
	rogue := &transport.Transport{ID: uint64(l + 1), Addr: "127.0.0.1:0", ServerTLS: serverTLS, ClientTLS: clientTLS}
	if err := rogue.Start(func(raftpb.Message) {}); err != nil {
		t.Fatal(err)
	}
	defer rogue.Stop()
	rogue.AddPeer(uint64(f+1), c.RaftAdr[f])
	term, _ := strconv.ParseUint(before["term"], 10, 64)
	for range 5 {
		rogue.Send([]raftpb.Message{{Type: raftpb.MsgHeartbeat, From: uint64(l + 1), To: uint64(f + 1), Term: term + 100}})
		time.Sleep(100 * time.Millisecond)
	}
	attack(t, c.RaftAdr[f], forgedHello(uint64(l+1), uint64(f+1), ""), make([]byte, 32))
	if s := rogue.Stats(); s.Sent != 0 {
		t.Errorf("a peer of another CA sent %d messages", s.Sent)
	}
	if after := testutil.Status(c.Nodes[f].Addr); after["term"] != before["term"] {
		t.Errorf("the term went from %s to %s", before["term"], after["term"])
	}
	expect(t, leader.Do("SET", "k2", "v2"), "+OK")
	c.WaitConverged(t, 20*time.Second)

	// New certificates from a new CA, in place: the running nodes take
	// them for new connections, so the follower restarted on them is let
	// back in, and a peer with the old ones is refused.
	old := map[string][]byte{}
	for _, f := range []string{cert, key, ca} {
		old[f], _ = os.ReadFile(f)
	}
	testutil.WriteCerts(t, dir, "cluster")
	for f, b := range old {
		os.WriteFile(f+".old", b, 0o600)
	}
	c.Nodes[f].Stop()
	c.Nodes[f].Restart(t)
	expect(t, leader.Do("SET", "k3", "v3"), "+OK")
	c.WaitConverged(t, 20*time.Second)
	serverTLS, clientTLS = mutualTLS(t, cert+".old", key+".old", ca+".old")
	stale := &transport.Transport{ID: uint64(l + 1), Addr: "127.0.0.1:0", ServerTLS: serverTLS, ClientTLS: clientTLS}
	if err := stale.Start(func(raftpb.Message) {}); err != nil {
		t.Fatal(err)
	}
	defer stale.Stop()
	stale.AddPeer(uint64(f+1), c.RaftAdr[f])
	stale.Send([]raftpb.Message{{Type: raftpb.MsgHeartbeat, From: uint64(l + 1), To: uint64(f + 1), Term: term + 100}})
	time.Sleep(500 * time.Millisecond)
	if s := stale.Stats(); s.Sent != 0 {
		t.Errorf("a peer with the replaced certificates sent %d messages", s.Sent)
	}
}

// mutualTLS is a Raft transport's TLS on the given files.
func mutualTLS(t *testing.T, cert, key, ca string) (server, client *tls.Config) {
	certs, err := transport.LoadCerts(transport.CertFiles{Cert: cert, Key: key, CAFile: ca})
	if err != nil {
		t.Fatal(err)
	}
	return transport.MutualTLS(certs)
}

// TestProtectedModeTLS: protected mode refuses a TLS client from another
// address as it refuses a plain one, with Redis's DENIED text sent after
// the handshake.
func TestProtectedModeTLS(t *testing.T) {
	n := newNetns(t)
	dir := t.TempDir()
	cert, key, ca := testutil.WriteCerts(t, dir, "protected")
	tlsPort := strconv.Itoa(testutil.FreePort(t))
	basalt := testutil.StartBasalt(t, "", "--bind", "0.0.0.0", "--tls-port", tlsPort, "--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", ca)
	cli := func(args ...string) string {
		out, _ := exec.Command("ip", append([]string{"netns", "exec", n.name, "redis-cli", "-h", n.hostIP, "-p", tlsPort,
			"--tls", "--cacert", ca, "--cert", cert, "--key", key}, args...)...).CombinedOutput()
		return string(out)
	}
	if got := cli("PING"); !strings.Contains(got, "DENIED Redis is running in protected mode") {
		t.Errorf("a TLS client from %s got %q", n.nsIP, got)
	}
	local := testutil.Dial(t, basalt.Addr)
	expect(t, local.Do("CONFIG", "SET", "protected-mode", "no"), "+OK")
	if got := cli("PING"); strings.TrimSpace(got) != "PONG" {
		t.Errorf("with protected-mode no: %q", got)
	}
}
