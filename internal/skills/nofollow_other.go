//go:build !unix

package skills

const oNoFollow = 0
