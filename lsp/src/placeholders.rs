//! Texts kept aside under placeholder strings: large answers written in
//! their placeholders' place (`raw_answers`), large document texts put
//! back in theirs (`large_texts`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Placeholders of one kind and the texts they stand for.
pub struct Placeholders {
    kind: &'static str,
    /// The last placeholder's number.
    last: AtomicU64,
    prefix: OnceLock<String>,
    texts: OnceLock<Mutex<HashMap<String, String>>>,
}

impl Placeholders {
    pub const fn new(kind: &'static str) -> Placeholders {
        Placeholders {
            kind,
            last: AtomicU64::new(0),
            prefix: OnceLock::new(),
            texts: OnceLock::new(),
        }
    }

    /// What every placeholder of this kind starts with: `planc-KIND-`, this
    /// process's id and the time it was first asked for, and a `-` — a word
    /// no client's text or answer holds otherwise.
    pub fn prefix(&self) -> &str {
        self.prefix.get_or_init(|| {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            format!("planc-{}-{}-{now:x}-", self.kind, std::process::id())
        })
    }

    /// A new placeholder, standing for `text`.
    pub fn keep(&self, text: String) -> String {
        let number = self.last.fetch_add(1, Ordering::Relaxed);
        let placeholder = format!("{}{number}", self.prefix());
        self.texts().insert(placeholder.clone(), text);
        placeholder
    }

    /// Each placeholder given and the text it stands for.
    pub fn texts(&self) -> MutexGuard<'_, HashMap<String, String>> {
        self.texts
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
