//go:build !unix

package code

const syscallNonblock = 0
