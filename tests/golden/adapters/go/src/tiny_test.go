// Package tiny holds two small benchmarks whose output is regbench's golden Go files.
package tiny

import (
	"strings"
	"testing"
)

var sink string

// BenchmarkJoin allocates, so -benchmem reports non-zero B/op and allocs/op.
func BenchmarkJoin(b *testing.B) {
	parts := []string{"a", "b", "c", "d", "e"}
	for i := 0; i < b.N; i++ {
		sink = strings.Join(parts, ",")
	}
}

// BenchmarkSum reports a custom metric and a throughput (MB/s) through b.SetBytes.
func BenchmarkSum(b *testing.B) {
	data := make([]byte, 1024)
	for i := range data {
		data[i] = byte(i)
	}
	b.SetBytes(int64(len(data)))
	total := 0
	for i := 0; i < b.N; i++ {
		for _, c := range data {
			total += int(c)
		}
	}
	b.ReportMetric(float64(len(data)), "bytes/iter")
	if total < 0 {
		b.Fatal("overflow")
	}
}
