package shard

import (
	"net"
	"strconv"
	"strings"
)

// ClientAddr is where a node serves clients, as it advertises it to its
// peers (Config.Advertise, carried by the transport's hello). Forward is
// the address peers forward commands to; Port and TLSPort are its plain
// and TLS ports (0: none), so that each client is given the port of its
// own kind, as Redis Cluster keeps a node's port and pport.
//
// Its text is Forward alone for a node without a TLS port (the form
// nodes used before they had one), else Forward followed by the ports by
// name: "10.0.0.1:6380 port=6379 tls-port=6380".
type ClientAddr struct {
	Forward       string
	Host          string
	Port, TLSPort int
}

func (a ClientAddr) String() string {
	if a.TLSPort == 0 {
		return a.Forward
	}
	s := a.Forward
	if a.Port != 0 {
		s += " port=" + strconv.Itoa(a.Port)
	}
	return s + " tls-port=" + strconv.Itoa(a.TLSPort)
}

// ParseClientAddr reads what a node advertised; the zero ClientAddr for
// "" (nothing heard from it yet). Names it does not know are skipped, so
// that a later version may add some.
func ParseClientAddr(s string) ClientAddr {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return ClientAddr{}
	}
	a := ClientAddr{Forward: fields[0]}
	host, port, err := net.SplitHostPort(a.Forward)
	if err != nil {
		return ClientAddr{}
	}
	a.Host = host
	if len(fields) == 1 {
		a.Port, _ = strconv.Atoi(port)
		return a
	}
	for _, f := range fields[1:] {
		name, value, _ := strings.Cut(f, "=")
		n, _ := strconv.Atoi(value)
		switch name {
		case "port":
			a.Port = n
		case "tls-port":
			a.TLSPort = n
		}
	}
	return a
}

// forwardAddr is the address to forward to in what a node advertised.
func forwardAddr(advertised string) string {
	return ParseClientAddr(advertised).Forward
}
