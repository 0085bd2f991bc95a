//! The content words of a text, to tell which of two steps a reply speaks
//! of ([`super::step_turn`]): Latin words (lowercase, common words left
//! out, plural and verb endings cut) and pairs of neighbouring Chinese
//! characters; of a tool call, its name and argument values.

use std::collections::HashSet;

use serde_json::Value;

/// The content words of a text: Latin words (lowercase, without common
/// words, plural and verb endings cut), and pairs of neighbouring Chinese
/// characters.
#[derive(Clone, Debug, Default)]
pub(super) struct Words {
    pub(super) set: HashSet<String>,
    /// The first Latin word, when the text starts with one (a step's verb).
    pub(super) first: Option<String>,
    /// Two neighbouring Latin words written as one, as in a domain or an
    /// identifier ("bestbuy" for "Best Buy"), with the two words' stems.
    joined: Vec<(String, [String; 2])>,
    /// The Latin word before, while reading a text (lowercase).
    last: Option<String>,
}

/// Words too common to tell steps apart.
const COMMON: [&str; 62] = [
    "the", "a", "an", "of", "for", "to", "in", "on", "and", "or", "with", "by", "it", "its", "at",
    "from", "as", "is", "are", "be", "this", "that", "each", "every", "all", "any", "my", "our",
    "your", "their", "i", "i'll", "we", "you", "me", "let", "now", "then", "next", "will", "into",
    "up", "out", "so", "if", "not", "no", "do", "http", "https", "www", "com", "org", "net",
    "html", "cn", "true", "false", "null", "step", "done", "one",
];

/// Chinese characters that carry no content in a pair.
const FUNCTION_CHARS: &str = "的了是在和并把将与及或这那我你他它们吗呢吧啊个一也都就还再要";

impl Words {
    pub(super) fn of(text: &str) -> Words {
        let mut words = Words::default();
        words.add(text);
        words
    }

    fn add(&mut self, text: &str) {
        let mut latin = String::new();
        let mut han: Vec<char> = Vec::new();
        let mut previous = ' ';
        for c in text.chars().chain(std::iter::once(' ')) {
            // camelCase and snake_case names are several words.
            let camel = previous.is_lowercase() && c.is_uppercase();
            previous = c;
            if camel {
                self.latin_word(&latin);
                latin.clear();
            }
            if is_cjk(c) && c.is_alphabetic() {
                self.latin_word(&latin);
                latin.clear();
                han.push(c);
                continue;
            }
            self.han_run(&han);
            if !han.is_empty() {
                self.last = None;
            }
            han.clear();
            if c.is_alphanumeric() || c == '\'' {
                latin.extend(c.to_lowercase());
            } else {
                self.latin_word(&latin);
                latin.clear();
            }
        }
    }

    fn latin_word(&mut self, word: &str) {
        let word = word.trim_matches('\'');
        if word.chars().count() < 2 || COMMON.contains(&word) {
            self.last = None;
            return;
        }
        if let Some(last) = self.last.take() {
            self.joined.push((
                format!("{last}{word}"),
                [stem(&last).to_owned(), stem(word).to_owned()],
            ));
        }
        self.last = Some(word.to_owned());
        if self.set.is_empty() && self.first.is_none() {
            self.first = Some(stem(word).to_owned());
        }
        self.set.insert(stem(word).to_owned());
    }

    fn han_run(&mut self, run: &[char]) {
        for pair in run.windows(2) {
            if !pair.iter().any(|&c| FUNCTION_CHARS.contains(c)) {
                self.set.insert(pair.iter().collect());
            }
        }
    }

    /// The strings inside a JSON value, at most 400 bytes of each.
    pub(super) fn add_value(&mut self, value: &Value) {
        match value {
            Value::String(text) => {
                let cut = (0..=text.len().min(400))
                    .rev()
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap_or(0);
                let text = &text[..cut];
                if looks_like_selector(text) {
                    // A selector's structure says nothing; the text it
                    // quotes and the ids it names (`#trackingNumber`) do.
                    for (i, part) in text.split(['\'', '"']).enumerate() {
                        if i % 2 == 1 {
                            self.add(part);
                            continue;
                        }
                        for id in part.split('#').skip(1) {
                            let end = id
                                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                                .unwrap_or(id.len());
                            self.add(&id[..end].replace(['_', '-'], " "));
                        }
                    }
                } else {
                    self.add(text);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| self.add_value(v)),
            Value::Object(map) => map.values().for_each(|v| self.add_value(v)),
            _ => {}
        }
    }

    /// How many of `step`'s words these words hold: the same word, or
    /// (Latin words of five letters or more) the same first five letters
    /// ("summary", "summarise").
    pub(super) fn matched(&self, step: &Words) -> usize {
        let joined: HashSet<&str> = step
            .joined
            .iter()
            .filter(|(one, _)| self.set.contains(one))
            .flat_map(|(_, pair)| pair.iter().map(String::as_str))
            .collect();
        step.set
            .iter()
            .filter(|w| {
                self.set.contains(*w)
                    || joined.contains(w.as_str())
                    || (w.len() >= 5
                        && w.is_ascii()
                        && self
                            .set
                            .iter()
                            .any(|o| o.len() >= 5 && o.is_ascii() && o[..5] == w[..5]))
            })
            .count()
    }
}

/// Whether a tool argument is a CSS selector or an XPath rather than content.
fn looks_like_selector(text: &str) -> bool {
    let text = text.trim();
    text.starts_with(['#', '.', '[']) && !text.starts_with("./") && !text.contains(' ')
        || [":has", ":nth", "[", " > ", "::", "//"]
            .iter()
            .any(|m| text.contains(m) && !text.contains("://"))
}

/// `word` without a plural or verb ending (`searching`, `searched`,
/// `searches` → `search`).
pub(super) fn stem(word: &str) -> &str {
    for ending in ["ing", "ed", "es", "s"] {
        if let Some(stem) = word.strip_suffix(ending) {
            if stem.chars().count() >= 3 {
                // A doubled final consonant: `running` → `run`.
                let bytes = stem.as_bytes();
                let n = bytes.len();
                let doubled = ending != "s"
                    && ending != "es"
                    && n >= 4
                    && bytes[n - 1] == bytes[n - 2]
                    && !b"aeiouls".contains(&bytes[n - 1]);
                return if doubled { &stem[..n - 1] } else { stem };
            }
        }
    }
    word
}

/// Han ideographs, kana and CJK punctuation.
pub(super) fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3000}'..='\u{30FF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{FF00}'..='\u{FFEF}'
        | '\u{20000}'..='\u{2FFFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_content_words() {
        let words = Words::of("Searching the trackingNumber field, 搜索结果的页面");
        let mut set: Vec<&str> = words.set.iter().map(String::as_str).collect();
        set.sort_unstable();
        assert_eq!(
            set,
            ["field", "number", "search", "track", "搜索", "索结", "结果", "页面"]
        );
        assert_eq!(words.first.as_deref(), Some("search"));
    }
}
