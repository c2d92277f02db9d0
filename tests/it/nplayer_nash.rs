//! (filled in by the issue 9 work)
