package transfer

import (
	"bufio"
	"bytes"
	"encoding"
	"errors"
	"hash"
	"io"
)

// lineReader reads an export a line at a time, holding at most max bytes
// of one line: a longer line is read to its end and dropped as it is read,
// so that a 100 MB line costs no more memory than a short one.
type lineReader struct {
	r   *bufio.Reader
	max int
	// n is the number of the line read last (1 is the header).
	n   int
	buf []byte
	// sum, when set, is the SHA-256 of every byte read; before, its state
	// before the last line, for unread.
	sum    hash.Hash
	before []byte
}

// unsum takes the last line out of the sum (the end line is not in it).
func (lr *lineReader) unsum() {
	if lr.sum != nil && lr.before != nil {
		_ = lr.sum.(encoding.BinaryUnmarshaler).UnmarshalBinary(lr.before)
	}
}

// prefixLen is how much of a line that is too long is kept, to tell its
// kind.
const prefixLen = 512

// next returns the next line without its newline, and whether it was
// longer than max: then line holds only its first bytes. It returns
// io.EOF after the last line. The line is valid until the next call.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	if lr.sum != nil {
		lr.before, _ = lr.sum.(encoding.BinaryMarshaler).MarshalBinary()
	}
	total := 0
	for {
		frag, err := lr.r.ReadSlice('\n')
		total += len(frag)
		if lr.sum != nil {
			lr.sum.Write(frag)
		}
		switch {
		case total <= lr.max+1: // +1: the newline
			lr.buf = append(lr.buf, frag...)
		case !tooLong:
			tooLong = true
			if keep := prefixLen - len(lr.buf); keep > 0 {
				lr.buf = append(lr.buf, frag[:min(keep, len(frag))]...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, err
		}
		if total == 0 {
			return nil, false, io.EOF
		}
		lr.n++
		if tooLong && len(lr.buf) > prefixLen {
			lr.buf = lr.buf[:prefixLen]
		}
		return bytes.TrimRight(lr.buf, "\r\n"), tooLong, nil
	}
}

// kindPrefix returns the kind a line names when it starts as an export
// writes it ({"kind":"…"), or "".
func kindPrefix(line []byte) string {
	const p = `{"kind":"`
	if !bytes.HasPrefix(line, []byte(p)) {
		return ""
	}
	rest := line[len(p):]
	i := bytes.IndexByte(rest, '"')
	if i < 0 || i > 64 {
		return ""
	}
	return string(rest[:i])
}
