package transport

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// Connection setup: who is on the other end. Every connection, for
// messages or for a snapshot, starts with a mutual challenge-response on
// the cluster secret before anything else is read or sent, so framing
// (transport.go, snapshot.go) only ever runs on an authenticated peer:
//
//	dialer → hello:  kind (magic, snapMagic or clockMagic), from, to, cluster ID,
//	                 nonce (32 bytes), raft address and advertise string
//	                 (each after a 2-byte length, at most maxHelloString)
//	listener →       cluster ID, nonce (32 bytes)
//	dialer →         HMAC("dialer", transcript)
//	listener →       HMAC("listener", transcript)
//
// The transcript is the hello and the listener's answer, so each MAC binds
// both nonces (fresh from crypto/rand), both node IDs, both cluster IDs
// and the addresses; the labels keep one side's MAC from being replayed as
// the other's. The dialer proves itself first: whoever merely reaches the
// port gets a nonce, never a MAC it could try guessed secrets against
// offline. The secret never crosses the wire. An empty secret makes the
// MACs a checksum anyone can compute: basalt allows it on loopback only,
// or under TLS (see docs/replication.md, "What a node trusts").
//
// The secret authenticates the connection's setup; frames after it are
// neither encrypted nor signed (unless over TLS), so a secret protects
// against strangers who can reach the port, not against one who can
// rewrite traffic on the path.

const (
	nonceSize        = 32
	macSize          = sha256.Size
	maxHelloString   = 1024
	helloFixedSize   = len(magic) + 8 + 8 + 8 + nonceSize
	handshakeTimeout = 2 * time.Second
)

// hello is what a dialer says about itself.
type hello struct {
	kind              string // magic (messages), snapMagic (a snapshot) or clockMagic (clock probes)
	from, to, cluster uint64
	nonce             [nonceSize]byte
	addr, advertise   string
}

func (h hello) marshal() []byte {
	b := make([]byte, 0, helloFixedSize+4+len(h.addr)+len(h.advertise))
	b = append(b, h.kind...)
	b = binary.BigEndian.AppendUint64(b, h.from)
	b = binary.BigEndian.AppendUint64(b, h.to)
	b = binary.BigEndian.AppendUint64(b, h.cluster)
	b = append(b, h.nonce[:]...)
	for _, s := range []string{h.addr, h.advertise} {
		s = s[:min(len(s), maxHelloString)]
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	return b
}

var (
	errNotRaft      = errors.New("not a raft transport connection")
	errLongString   = errors.New("an address in the hello is too long")
	errBadMAC       = errors.New("authentication failed: the peer does not have this node's cluster secret")
	errOtherCluster = errors.New("the peer belongs to another cluster")
	errNotMember    = errors.New("the node is not a member of this node's group")
)

// readHello reads a dialer's hello and returns it with its raw bytes.
func readHello(r io.Reader) (hello, []byte, error) {
	var h hello
	raw := make([]byte, helloFixedSize, helloFixedSize+64)
	if _, err := io.ReadFull(r, raw); err != nil {
		return h, nil, err
	}
	h.kind = string(raw[:len(magic)])
	if h.kind != magic && h.kind != snapMagic && h.kind != clockMagic {
		return h, nil, errNotRaft
	}
	p := raw[len(magic):]
	h.from = binary.BigEndian.Uint64(p)
	h.to = binary.BigEndian.Uint64(p[8:])
	h.cluster = binary.BigEndian.Uint64(p[16:])
	copy(h.nonce[:], p[24:])
	for _, s := range []*string{&h.addr, &h.advertise} {
		var n [2]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return h, nil, err
		}
		size := int(binary.BigEndian.Uint16(n[:]))
		if size > maxHelloString {
			return h, nil, errLongString
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return h, nil, err
		}
		*s = string(b)
		raw = append(append(raw, n[:]...), b...)
	}
	return h, raw, nil
}

// mac is HMAC-SHA256 of the transcript under the secret, for one role.
func mac(secret []byte, role string, transcript []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("basalt raft " + role + "\x00"))
	m.Write(transcript)
	return m.Sum(nil)
}

func newNonce() (n [nonceSize]byte) {
	if _, err := rand.Read(n[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// clusterFor returns the cluster ID a connection agrees on, adopting the
// peer's if this node has none yet (a node that joins learns it from the
// first authenticated member that dials it or that it dials).
func (t *Transport) clusterFor(peer uint64) (uint64, error) {
	own := t.clusterID.Load()
	switch {
	case peer == own || peer == 0:
		return own, nil
	case own == 0 && t.clusterID.CompareAndSwap(0, peer):
		if t.LearnCluster != nil {
			t.LearnCluster(peer)
		}
		return peer, nil
	}
	return own, fmt.Errorf("%w: the peer is in cluster %016x, this node in cluster %016x", errOtherCluster, peer, t.clusterID.Load())
}

// ClusterID is the cluster this node belongs to (0: not known yet).
func (t *Transport) ClusterID() uint64 { return t.clusterID.Load() }

// clientHandshake authenticates a connection this node dialed to peer to.
func (t *Transport) clientHandshake(c net.Conn, kind string, to uint64) error {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	h := hello{kind: kind, from: t.ID, to: to, cluster: t.clusterID.Load(), nonce: newNonce(), advertise: t.Advertise}
	if t.ln != nil {
		h.addr = t.ListenAddr()
	}
	transcript := h.marshal()
	if _, err := c.Write(transcript); err != nil {
		return err
	}
	answer := make([]byte, 8+nonceSize)
	if _, err := io.ReadFull(c, answer); err != nil {
		return fmt.Errorf("no answer to the handshake (the peer refused it, or is not node %d): %w", to, err)
	}
	transcript = append(transcript, answer...)
	if _, err := c.Write(mac(t.Secret, "dialer", transcript)); err != nil {
		return err
	}
	proof := make([]byte, macSize)
	if _, err := io.ReadFull(c, proof); err != nil {
		return fmt.Errorf("the peer refused the handshake (another cluster secret?): %w", err)
	}
	if !hmac.Equal(proof, mac(t.Secret, "listener", transcript)) {
		return errBadMAC
	}
	_, err := t.clusterFor(binary.BigEndian.Uint64(answer))
	return err
}

// serverHandshake authenticates a connection a peer dialed, and returns
// what the peer said about itself; only its ID is to be trusted, and only
// once this returns without an error.
func (t *Transport) serverHandshake(c net.Conn, r *bufio.Reader) (hello, error) {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	h, transcript, err := readHello(r)
	if err != nil {
		return h, err
	}
	if h.to != t.ID {
		return h, fmt.Errorf("node %d dialed this node (%d) as node %d", h.from, t.ID, h.to)
	}
	answer := binary.BigEndian.AppendUint64(nil, t.clusterID.Load())
	nonce := newNonce()
	answer = append(answer, nonce[:]...)
	transcript = append(transcript, answer...)
	if _, err := c.Write(answer); err != nil {
		return h, err
	}
	proof := make([]byte, macSize)
	if _, err := io.ReadFull(r, proof); err != nil {
		return h, err
	}
	if !hmac.Equal(proof, mac(t.Secret, "dialer", transcript)) {
		return h, errBadMAC
	}
	// Answered before the cluster check, so the dialer logs a mismatch too.
	if _, err := c.Write(mac(t.Secret, "listener", transcript)); err != nil {
		return h, err
	}
	_, err = t.clusterFor(h.cluster)
	return h, err
}
