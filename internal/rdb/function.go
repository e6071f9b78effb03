package rdb

import "errors"

// Payloads of FUNCTION DUMP and FUNCTION RESTORE: each library's code as a
// FUNCTION2 opcode and a string, then the version and checksum footer
// (functionDumpCommand in Redis 7.0).

// EncodeFunctions returns the FUNCTION DUMP payload of the libraries'
// codes.
func EncodeFunctions(codes [][]byte) []byte {
	var b []byte
	for _, code := range codes {
		b = appendString(append(b, opFunction2), code)
	}
	return seal(b)
}

// DecodeFunctions returns the libraries' codes of a FUNCTION RESTORE
// payload. Its errors are Redis's messages, without the "ERR " code.
func DecodeFunctions(p []byte) ([][]byte, error) {
	if Verify(p) != nil {
		return nil, errors.New("DUMP payload version or checksum are wrong")
	}
	r := &reader{b: p}
	var codes [][]byte
	for len(p)-r.pos > footer {
		t, err := r.byte()
		switch {
		case err != nil:
			return nil, errors.New("can not read data type")
		case t == opFunction:
			return nil, errors.New("Pre-GA function format not supported")
		case t != opFunction2:
			return nil, errors.New("given type is not a function")
		}
		code, err := r.str()
		if err != nil {
			return nil, errors.New("Failed loading library payload")
		}
		codes = append(codes, append([]byte(nil), code...))
	}
	return codes, nil
}
