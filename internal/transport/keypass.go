package transport

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/youmark/pkcs8"
)

// Encrypted private keys (tls-key-file-pass, tls-client-key-file-pass).
// Go's tls.X509KeyPair reads only unencrypted keys, so a key file is
// decrypted first, in memory, into the PEM it reads.

// decryptKey returns a key file's PEM with its private key decrypted with
// pass. It reads the two encryptions OpenSSL writes: PKCS#8's ("ENCRYPTED
// PRIVATE KEY", what openssl genpkey -aes256 and openssl pkcs8 -topk8
// write), through github.com/youmark/pkcs8 since the standard library has
// no reader for it, and the legacy encryption of PEM headers
// ("Proc-Type: 4,ENCRYPTED", what openssl genrsa -aes256 writes). A key
// that is not encrypted is returned as it is, whatever pass is (as
// OpenSSL, which asks for no password then).
func decryptKey(keyPEM []byte, pass, passName string) ([]byte, error) {
	block := privateKeyBlock(keyPEM)
	if block == nil {
		return keyPEM, nil // tls.X509KeyPair says what is wrong with it
	}
	encrypted := block.Type == "ENCRYPTED PRIVATE KEY"
	//lint:ignore SA1019 the legacy PEM encryption is insecure and deprecated, but it is what older OpenSSL writes, and the standard library's reader is the only one
	legacy := x509.IsEncryptedPEMBlock(block)
	switch {
	case !encrypted && !legacy:
		return keyPEM, nil
	case pass == "":
		return nil, fmt.Errorf("the private key is encrypted, and %s is not set", passName)
	case encrypted:
		der, err := decryptPKCS8(block.Bytes, pass)
		if err != nil {
			return nil, fmt.Errorf("cannot decrypt the private key with %s (a wrong password?): %w", passName, err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	}
	//lint:ignore SA1019 see above: the only reader of this encryption
	der, err := x509.DecryptPEMBlock(block, []byte(pass))
	if err == nil && !isPrivateKey(der) {
		err = x509.IncorrectPasswordError // its padding check passes one wrong password in about 256
	}
	if err != nil {
		return nil, fmt.Errorf("cannot decrypt the private key with %s (a wrong password?): %w", passName, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), nil
}

// privateKeyBlock is the first private key of a PEM file, nil if none.
func privateKeyBlock(data []byte) *pem.Block {
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			return nil
		}
		if strings.HasSuffix(block.Type, "PRIVATE KEY") {
			return block
		}
		data = rest
	}
}

// isPrivateKey reports whether der is a private key of a form PEM's
// legacy encryption holds (PKCS#1, SEC 1 or PKCS#8).
func isPrivateKey(der []byte) bool {
	_, errRSA := x509.ParsePKCS1PrivateKey(der)
	_, errEC := x509.ParseECPrivateKey(der)
	_, errPKCS8 := x509.ParsePKCS8PrivateKey(der)
	return errRSA == nil || errEC == nil || errPKCS8 == nil
}

// decryptPKCS8 decrypts a PKCS#8 key into its unencrypted DER. The
// module's decryption panics on some malformed input (an IV or data not
// of the cipher's block size): a bad file must be an error, not a node
// that stops (CONFIG SET may name any file).
func decryptPKCS8(der []byte, pass string) (out []byte, err error) {
	defer func() {
		if recover() != nil {
			out, err = nil, errors.New("malformed encrypted key")
		}
	}()
	key, err := pkcs8.ParsePKCS8PrivateKey(der, []byte(pass))
	if err != nil {
		return nil, err
	}
	return x509.MarshalPKCS8PrivateKey(key)
}
