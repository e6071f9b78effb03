package rdb

import "errors"

// LZF (Marc Lehmann's liblzf) is what Redis compresses strings of more than
// 20 bytes with when rdbcompression is on, as it is by default, so a DUMP
// of a long string or of a list's listpack nodes is often LZF. No Go module
// that is kept up implements it, and the decompressor is a few lines, so it
// is written here, following the format (lzf_d.c): a control byte below 32
// starts a run of ctrl+1 literal bytes; otherwise its top 3 bits are a
// length (7: one more byte adds to it) and its low 5 bits and the next byte
// an offset back into the output, from which len+2 bytes are copied (the
// copy may overlap what it writes).

var errLZF = errors.New("rdb: invalid LZF data")

// lzfDecompress decompresses in into exactly n bytes. The caller bounds n;
// the output grows as it is written, so garbage that claims a big n fails
// before much is allocated.
func lzfDecompress(in []byte, n int) ([]byte, error) {
	out := make([]byte, 0, min(n, 8*len(in)+64))
	for ip := 0; ip < len(in); {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 {
			run := ctrl + 1
			if len(out)+run > n || ip+run > len(in) {
				return nil, errLZF
			}
			out = append(out, in[ip:ip+run]...)
			ip += run
			continue
		}
		length := ctrl >> 5
		back := (ctrl&0x1f)<<8 + 1
		if ip >= len(in) {
			return nil, errLZF
		}
		if length == 7 {
			length += int(in[ip])
			ip++
			if ip >= len(in) {
				return nil, errLZF
			}
		}
		back += int(in[ip])
		ip++
		length += 2
		ref := len(out) - back
		if ref < 0 || len(out)+length > n {
			return nil, errLZF
		}
		for i := range length { // byte by byte: the source may overlap
			out = append(out, out[ref+i])
		}
	}
	if len(out) != n {
		return nil, errLZF
	}
	return out, nil
}
