//! Nothing here: the benchmark lives in benches/sum.rs.
