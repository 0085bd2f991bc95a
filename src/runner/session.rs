//! Sessions: a state per conversation at `.sessions/KEY/plan.json` under the
//! current directory (`--session KEY`), the way the text protocol keeps one
//! plan per chat session.

use std::path::PathBuf;

/// The directory that holds the sessions, under the current directory.
pub const SESSIONS_DIR: &str = ".sessions";

/// The state file's name inside a session's directory.
pub const SESSION_STATE: &str = "plan.json";

/// The longest session key, in bytes.
pub const MAX_SESSION_KEY_BYTES: usize = 128;

/// The state file of session `key`: `.sessions/KEY/plan.json`, relative to
/// the current directory. A key is one path component: not empty, at most
/// [`MAX_SESSION_KEY_BYTES`] bytes, without `/`, `\`, `..` or control
/// characters; otherwise the error says which rule it breaks.
pub fn session_path(key: &str) -> Result<PathBuf, String> {
    let why = if key.is_empty() {
        Some("it is empty".to_owned())
    } else if key.len() > MAX_SESSION_KEY_BYTES {
        Some(format!("it is longer than {MAX_SESSION_KEY_BYTES} bytes"))
    } else if key.contains(['/', '\\']) {
        Some("it holds a path separator (`/` or `\\`)".to_owned())
    } else if key == "." || key.contains("..") {
        Some("it holds `..` or is `.`".to_owned())
    } else if key.chars().any(char::is_control) {
        Some("it holds a control character".to_owned())
    } else {
        None
    };
    match why {
        Some(why) => Err(format!(
            "`{}` is not a session key: {why}; a key is one name such as `chat-42`",
            crate::escape::line(&crate::suggest::shorten(key, 60))
        )),
        None => Ok([SESSIONS_DIR, key, SESSION_STATE].iter().collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_one_path_component() {
        assert_eq!(
            session_path("chat-42").unwrap(),
            PathBuf::from(".sessions/chat-42/plan.json")
        );
        assert_eq!(
            session_path("会话_1").unwrap(),
            PathBuf::from(".sessions/会话_1/plan.json")
        );
        for bad in ["", "a/b", "a\\b", "..", "x..y", ".", "a\nb", "a\u{0}b"] {
            assert!(session_path(bad).is_err(), "{bad:?}");
        }
        assert!(session_path(&"k".repeat(129)).is_err());
        assert_eq!(
            session_path("../etc").unwrap_err(),
            "`../etc` is not a session key: it holds a path separator (`/` or `\\`); a key is one name such as `chat-42`"
        );
    }
}
