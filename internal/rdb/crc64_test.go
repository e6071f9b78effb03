package rdb

import "testing"

// The check value Redis's crc64.c tests itself with.
func TestCRC64Jones(t *testing.T) {
	if got := CRC64([]byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
}
