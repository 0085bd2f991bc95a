//! How many threads the machine runs at once, asked once per process.

/// Whether the machine runs two threads at once, so that a large file's
/// work is worth splitting: asked once per process (the standard library
/// reads the process's CPU quota from files at each call, which costs tens
/// of microseconds, a tenth of a keystroke's budget in a large plan).
pub(crate) fn two_cores() -> bool {
    static TWO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TWO.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
}
