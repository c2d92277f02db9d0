//! When two actions' values count as equal, for every best response (the sequence pass and
//! the history pass of imperfect-recall trees alike).

/// Action values within this relative distance of the best count as tied (lowest wins).
pub const TIE_TOLERANCE: f64 = 1e-12;
