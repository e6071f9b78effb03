package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/youmark/pkcs8"
)

func TestDecryptKey(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	plain, _ := x509.MarshalECPrivateKey(key)
	p8, err := pkcs8.MarshalPrivateKey(key, []byte("pw"), nil)
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the legacy encryption is what this test reads
	legacy, err := x509.EncryptPEMBlock(rand.Reader, "EC PRIVATE KEY", plain, []byte("pw"), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"pkcs8":  pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: p8}),
		"legacy": pem.EncodeToMemory(legacy),
	}
	for name, file := range files {
		out, err := decryptKey(file, "pw", "tls-key-file-pass")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := privateKeyBlock(out); b == nil || !isPrivateKey(b.Bytes) {
			t.Errorf("%s: decrypted into %q", name, out)
		}
		if _, err := decryptKey(file, "", "tls-key-file-pass"); err == nil || !strings.Contains(err.Error(), "tls-key-file-pass is not set") {
			t.Errorf("%s without a password: %v", name, err)
		}
		// Many wrong passwords: the legacy padding check alone lets about
		// one in 256 through.
		for i := range 600 {
			if _, err := decryptKey(file, fmt.Sprint("wrong", i), "tls-key-file-pass"); err == nil {
				t.Fatalf("%s: wrong password %d accepted", name, i)
			}
			if name == "pkcs8" && i == 20 {
				break // its KDF is slow, and its check is the key's parse
			}
		}
	}
	// An unencrypted key is used as it is, password or not.
	unencrypted := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: plain})
	if out, err := decryptKey(unencrypted, "pw", "tls-key-file-pass"); err != nil || string(out) != string(unencrypted) {
		t.Errorf("an unencrypted key: %q, %v", out, err)
	}
}

// TestDecryptKeyMalformed: encrypted data not of the cipher's block size,
// on which the PKCS#8 module panics, is an error.
func TestDecryptKeyMalformed(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := pkcs8.MarshalPrivateKey(key, []byte("pw"), nil)
	var info struct {
		Algo pkix.AlgorithmIdentifier
		Data []byte
	}
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		t.Fatal(err)
	}
	info.Data = info.Data[:5]
	bad, _ := asn1.Marshal(info)
	if _, err := decryptKey(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: bad}), "pw", "tls-key-file-pass"); err == nil {
		t.Error("a malformed key was decrypted")
	}
}
