package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// MutualTLS builds the TLS configurations of a node's Raft connections
// from redis.conf's files: its certificate and key, presented both when it
// dials and when it is dialed, and the CA a peer's certificate must chain
// to. As Redis does for its replication and cluster bus links, a peer is
// trusted for its CA, not its host name (Raft addresses are often bare
// IPs); which node it is, is then settled by the handshake of auth.go.
func MutualTLS(certFile, keyFile, caFile string) (server, client *tls.Config, err error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("tls-cert-file/tls-key-file: %w", err)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, nil, fmt.Errorf("tls-ca-cert-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, nil, fmt.Errorf("tls-ca-cert-file: %s holds no PEM certificate", caFile)
	}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	client = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		// The chain is checked below, against the CA only.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChain(raw, pool)
		}}
	return server, client, nil
}

// verifyChain checks that the peer's certificate chains to a CA in pool.
func verifyChain(raw [][]byte, pool *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("the peer sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, b := range raw {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := certs[0].Verify(opts)
	return err
}
