package testutil

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Netns runs a cluster's nodes in network namespaces of their own, so that
// a test partitions them with the network itself, as a failed switch port
// or cable would, rather than inside basalt (RAFT ISOLATE). Node i runs in
// namespace NAME-i at 10.A.B.(i+1), linked by a veth pair to a bridge in
// the test's namespace at 10.A.B.254, through which the test reaches
// every node.
type Netns struct {
	name   string // a prefix of its own: namespaces and links of several tests coexist
	subnet string // "10.A.B."
	n      int
}

// NewNetns makes the namespaces of n nodes, removed when the test ends. It
// skips the test, saying why, where namespaces cannot be made (no ip
// command, or not allowed).
func NewNetns(t testing.TB, n int) *Netns {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network namespaces: no ip command (Debian's iproute2)")
	}
	nn := &Netns{name: fmt.Sprintf("bt%05x", rand.IntN(1<<20)), subnet: fmt.Sprintf("10.%d.%d.", 100+rand.IntN(100), rand.IntN(256)), n: n}
	bridge := nn.name + "br"
	if err := ip("link", "add", bridge, "type", "bridge"); err != nil {
		if strings.Contains(err.Error(), "Operation not permitted") {
			t.Skipf("network namespaces: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := range n {
			_ = ip("netns", "del", nn.ns(i)) // takes its end of the veth pair, and so the pair
		}
		_ = ip("link", "del", bridge)
	})
	steps := [][]string{{"addr", "add", nn.subnet + "254/24", "dev", bridge}, {"link", "set", bridge, "up"}}
	for i := range n {
		host, node := nn.name+"h"+strconv.Itoa(i), nn.name+"n"+strconv.Itoa(i)
		steps = append(steps,
			[]string{"netns", "add", nn.ns(i)},
			[]string{"link", "add", host, "type", "veth", "peer", "name", node},
			[]string{"link", "set", node, "netns", nn.ns(i)},
			[]string{"link", "set", host, "master", bridge},
			[]string{"link", "set", host, "up"},
			[]string{"-n", nn.ns(i), "addr", "add", nn.IP(i) + "/24", "dev", node},
			[]string{"-n", nn.ns(i), "link", "set", node, "up"},
			[]string{"-n", nn.ns(i), "link", "set", "lo", "up"})
	}
	for _, step := range steps {
		if err := ip(step...); err != nil {
			t.Fatal(err)
		}
	}
	return nn
}

func (nn *Netns) ns(i int) string { return nn.name + "-" + strconv.Itoa(i) }

// IP is node i's address.
func (nn *Netns) IP(i int) string { return nn.subnet + strconv.Itoa(i+1) }

// Isolate cuts node i off the network (its link to the bridge goes down),
// or puts it back: its peers and the test's clients lose it alike.
func (nn *Netns) Isolate(i int, on bool) error {
	state := "up"
	if on {
		state = "down"
	}
	return ip("link", "set", nn.name+"h"+strconv.Itoa(i), state)
}

// Cut drops the traffic between nodes i and j both ways (a blackhole route
// in each one's namespace), or lets it through again; both still reach
// the other nodes and the test.
func (nn *Netns) Cut(i, j int, on bool) error {
	op := "del"
	if on {
		op = "add"
	}
	if err := ip("-n", nn.ns(i), "route", op, "blackhole", nn.IP(j)+"/32"); err != nil {
		return err
	}
	return ip("-n", nn.ns(j), "route", op, "blackhole", nn.IP(i)+"/32")
}

// StartCluster starts a cluster of one node per namespace (IDs 1..n), as
// StartCluster does on loopback, and waits for a leader. Beyond loopback a
// node needs a cluster secret and protected mode off.
func (nn *Netns) StartCluster(t testing.TB, args ...string) *Cluster {
	t.Helper()
	c := &Cluster{}
	var members []string
	for i := range nn.n {
		c.RaftAdr = append(c.RaftAdr, nn.IP(i)+":7000")
		members = append(members, strconv.Itoa(i+1)+"="+c.RaftAdr[i])
	}
	for i := range nn.n {
		a := append([]string{"--node-id", strconv.Itoa(i + 1), "--raft-addr", c.RaftAdr[i], "--initial-cluster", strings.Join(members, ","),
			"--protected-mode", "no", "--cluster-secret", "the-secret-of-a-test-cluster-in-namespaces"}, args...)
		c.Nodes = append(c.Nodes, startBasaltAt(t, place{host: nn.IP(i), wrap: []string{"ip", "netns", "exec", nn.ns(i)}}, "", a...))
	}
	c.WaitLeader(t, 15*time.Second)
	return c
}

// ip runs the ip command; its error holds what it printed.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
