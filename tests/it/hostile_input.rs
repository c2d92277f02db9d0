//! Hostile input and resource limits (issue 14): oversized headers, unbounded reads, overflowing payoffs, each a one-line error with exit 2.
