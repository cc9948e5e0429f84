//! Placeholder: the replay module is being built (see the open issue).

pub mod cli;
