//! Unit tests of the runner library.
