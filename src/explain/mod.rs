//! Where the instructions went: from the callgrind files a bench kept for
//! each counted run, the instructions per function and per object of each
//! variant, against the baseline's, largest change first.

pub mod parse;
