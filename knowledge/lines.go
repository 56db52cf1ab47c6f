package knowledge

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader splits a JSON Lines stream. Unlike bufio.Scanner it survives
// an over-long line: the line is skipped to its end and reported, so one
// bad line cannot stop an import.
type lineReader struct {
	r    *bufio.Reader
	n    int // number of the line last returned
	max  int
	buf  []byte
	bomc bool // the first line was checked for a byte order mark
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its "\n" or "\r\n" and its number.
// tooLong reports a line longer than max (its content is not returned).
// At the end of the stream it returns io.EOF.
func (l *lineReader) next() (line []byte, n int, tooLong bool, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(l.buf)+len(chunk) > l.max+2 { // +2: room for the line ending
			tooLong = true
		} else {
			l.buf = append(l.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, l.n, false, err
		}
		if err != nil && len(l.buf) == 0 && !tooLong {
			return nil, l.n, false, io.EOF
		}
		break
	}
	l.n++
	if tooLong {
		return nil, l.n, true, nil
	}
	line = bytes.TrimSuffix(l.buf, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if !l.bomc {
		l.bomc = true
		line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	return line, l.n, false, nil
}
