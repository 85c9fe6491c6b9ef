// Package failing holds benchmarks that fail in each way `go test -bench` reports, beside ones
// that succeed: regbench's golden Go files of failed benchmarks.
package failing

import (
	"os"
	"strings"
	"testing"
)

var sink string

// BenchmarkJoin succeeds.
func BenchmarkJoin(b *testing.B) {
	parts := []string{"a", "b", "c"}
	for i := 0; i < b.N; i++ {
		sink = strings.Join(parts, ",")
	}
}

// BenchmarkBroken fails on its first call: `--- FAIL: BenchmarkBroken`, without -GOMAXPROCS;
// with REGBENCH_GOLDEN_PANIC=first it panics there, before go test prints its name.
func BenchmarkBroken(b *testing.B) {
	if os.Getenv("REGBENCH_GOLDEN_PANIC") == "first" {
		panic("nil tree")
	}
	b.Log("building the tree")
	b.Fatal("degree must be at least 2")
}

// BenchmarkLate fails only in the timed repetitions (b.N > 1), or panics there with
// REGBENCH_GOLDEN_PANIC=late.  A panic ends the test binary.
func BenchmarkLate(b *testing.B) {
	if b.N > 1 {
		if os.Getenv("REGBENCH_GOLDEN_PANIC") == "late" {
			panic("index out of range in Late")
		}
		b.Fatalf("too many iterations: %d", b.N)
	}
}

// BenchmarkSub has a sub-benchmark that succeeds and one that fails (its parent fails too).
func BenchmarkSub(b *testing.B) {
	b.Run("ok", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sink = "x"
		}
	})
	b.Run("bad", func(b *testing.B) {
		b.Errorf("wrong answer %d", 42)
	})
}

// BenchmarkZ succeeds, after the failures.
func BenchmarkZ(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sink = strings.Repeat("z", 3)
	}
}
