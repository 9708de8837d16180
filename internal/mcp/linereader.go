package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

var errLineTooLong = errors.New("mcp: message too long")

// lineReader splits a byte stream into lines, refusing lines longer than
// max without buffering them.
type lineReader struct {
	br      *bufio.Reader
	max     int
	long    []byte
	pending error
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending. The line is valid
// until the following call. A line longer than max is skipped and reported
// as errLineTooLong; io.EOF comes with the last (unterminated) line.
func (lr *lineReader) next() ([]byte, error) {
	if lr.pending != nil {
		err := lr.pending
		lr.pending = nil
		return nil, err
	}
	line, err := lr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = lr.br.ReadSlice('\n')
			if len(lr.long)+len(line) > lr.max+2 {
				lr.long = nil
				for err == bufio.ErrBufferFull {
					_, err = lr.br.ReadSlice('\n')
				}
				if err != nil {
					lr.pending = err
				}
				return nil, errLineTooLong
			}
			lr.long = append(lr.long, line...)
		}
		line = lr.long
		if cap(lr.long) > 1<<20 {
			lr.long = nil
		}
	}
	line = trimEOL(line)
	if len(line) > lr.max {
		if err != nil {
			lr.pending = err
		}
		return nil, errLineTooLong
	}
	return line, err
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// lineBuffered reports whether a whole line is buffered: next returns it
// without reading.
func (lr *lineReader) lineBuffered() bool {
	n := lr.br.Buffered()
	if n == 0 {
		return false
	}
	b, _ := lr.br.Peek(n)
	return bytes.IndexByte(b, '\n') >= 0
}
