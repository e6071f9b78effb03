package cluster

import (
	"bytes"
	"testing"
)

func TestCRC16(t *testing.T) {
	for in, want := range map[string]uint16{
		"":          0,
		"123456789": 0x31C3, // the CRC-16/XMODEM check value
		"a":         0x7C87,
		"foo":       0xAF96,
		"\xff":      0x1EF0,
	} {
		if got := CRC16([]byte(in)); got != want {
			t.Errorf("CRC16(%q) = %#04x, want %#04x", in, got, want)
		}
	}
}

// crc16Bitwise is the textbook bit-at-a-time CRC-16/XMODEM.
func crc16Bitwise(b []byte) uint16 {
	var crc uint16
	for _, c := range b {
		crc ^= uint16(c) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func TestCRC16Table(t *testing.T) {
	var buf []byte
	for i := range 1000 {
		buf = append(buf, byte(i*7+i>>3))
		if got, want := CRC16(buf), crc16Bitwise(buf); got != want {
			t.Fatalf("len %d: %#04x != %#04x", len(buf), got, want)
		}
	}
}

// Slots checked against redis-server 7.0.15 CLUSTER KEYSLOT.
func TestKeySlot(t *testing.T) {
	for key, want := range map[string]uint16{
		"":                     0,
		"foo":                  12182,
		"bar":                  5061,
		"123456789":            12739,
		"user:1000":            1649,
		"hello world":          15332,
		"\xff\x80":             4727,
		"{user1000}.following": 3443, // same tag, same slot
		"{user1000}.followers": 3443,
		"user:{1000}:profile":  11326,
		"a{b}":                 3300,
		"foo{bar}{zap}":        5061, // first tag only: "bar"
		"foo{{bar}}zap":        4015, // tag is "{bar"
		"{{}}":                 4092, // tag is "{"
		"{":                    4092,
		"foo{}{bar}":           8363, // empty first tag: whole key
		"{}":                   15257,
		"{}a}":                 4370,
		"{a":                   10276, // unterminated: whole key
		"}":                    12090,
		"a}":                   5921,
		"}{a}":                 15495, // '}' before '{' is ignored
	} {
		if got := KeySlot([]byte(key)); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", key, got, want)
		}
		if got := KeySlotString(key); got != want {
			t.Errorf("KeySlotString(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestHashTag(t *testing.T) {
	for key, want := range map[string]string{
		"plain":         "plain",
		"{a}b":          "a",
		"x{ab}y{c}":     "ab",
		"{}x":           "{}x",
		"{}{x}":         "{}{x}", // only the first '{' counts
		"{{x}":          "{x",
		"{x":            "{x",
		"a\x00{b}":      "b",
		"{\x00}":        "\x00",
		"{ab}}":         "ab",
		"pre{mid}post}": "mid",
	} {
		if got := HashTag([]byte(key)); !bytes.Equal(got, []byte(want)) {
			t.Errorf("HashTag(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestKeySlotRange(t *testing.T) {
	for i := range 100000 {
		key := []byte{byte(i), byte(i >> 8), byte(i >> 16), '{', byte(i * 31)}
		if s := KeySlot(key); s >= SlotCount {
			t.Fatalf("KeySlot(%q) = %d", key, s)
		}
	}
}

func BenchmarkKeySlot(b *testing.B) {
	key := []byte("user:{1000}:profile:settings")
	for b.Loop() {
		KeySlot(key)
	}
}
