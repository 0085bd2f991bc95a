//! The dialects against the seeds' shapes.
