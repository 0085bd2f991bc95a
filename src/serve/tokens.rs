//! The credentials `planc serve` takes: `--token` (one secret, admin) and
//! `--tokens FILE` (SHA-256 hashes of secrets, each with a scope, the agent
//! a work token acts as, and the plans it may touch); which one a request
//! presents, found in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::scope::{Grant, Scope};

/// The fewest characters a token may have (`--token`, `planc serve
/// hash-token`): 16 random characters are out of reach of guessing at any
/// rate a server answers.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why `token` cannot guard a server (blank, white space or control
/// characters inside, shorter than [`MIN_TOKEN_CHARS`]), if it cannot.
pub fn check_token(token: &str) -> Result<(), String> {
    if token.trim().is_empty() {
        return Err("the token is blank: a token of white space guards nothing".to_owned());
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(
            "the token has white space or control characters in it (a bearer header cannot carry them whole)"
                .to_owned(),
        );
    }
    let chars = token.chars().count();
    if chars < MIN_TOKEN_CHARS {
        return Err(format!(
            "the token is {chars} character(s); planc serve takes tokens of at least {MIN_TOKEN_CHARS} \
             (make one with `openssl rand -hex 32`)"
        ));
    }
    Ok(())
}

/// The SHA-256 of `token`.
fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// How a token is written in a tokens file: `sha256:` and the hex of its
/// SHA-256 (what `planc serve hash-token` prints).
pub fn hash_token(token: &str) -> String {
    let mut out = String::from("sha256:");
    for byte in digest(token) {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// One credential: the hash of its secret and what it grants.
#[derive(Clone, Debug)]
struct Credential {
    hash: [u8; 32],
    grant: Grant,
}

/// Every credential a server takes (none: no authentication).
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    known: Vec<Credential>,
}

impl Credentials {
    /// Whether requests must present a token.
    pub fn required(&self) -> bool {
        !self.known.is_empty()
    }

    /// Adds `token` (checked) as an admin token for every plan.
    pub fn add_admin_token(&mut self, token: &str) -> Result<(), String> {
        check_token(token)?;
        self.known.push(Credential {
            hash: digest(token),
            grant: Grant::everything(),
        });
        Ok(())
    }

    /// Adds the credentials of a tokens file's text (`origin` names it in
    /// errors).
    pub fn add_file(&mut self, text: &str, origin: &str) -> Result<(), String> {
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let credential = parse_line(line)
                .map_err(|message| format!("{origin}:{}: {message}", number + 1))?;
            self.known.push(credential);
        }
        if self.known.is_empty() {
            return Err(format!(
                "{origin} holds no token: a tokens file has one line per token, `sha256:HEX SCOPE [agent=NAME] [plans=ID,…]`"
            ));
        }
        Ok(())
    }

    /// What `token` grants, if it is one of these credentials. Every
    /// credential is compared (in constant time), whichever matches.
    pub fn grant_of(&self, token: &str) -> Option<Grant> {
        let given = digest(token);
        let mut found = None;
        for credential in &self.known {
            let same = bool::from(credential.hash.ct_eq(&given));
            if same && found.is_none() {
                found = Some(credential.grant.clone());
            }
        }
        found
    }
}

/// One line of a tokens file: `sha256:HEX SCOPE [agent=NAME] [plans=ID,…]`.
fn parse_line(line: &str) -> Result<Credential, String> {
    let mut fields = line.split_whitespace();
    let hash = fields.next().unwrap_or("");
    let hash = parse_hash(hash)?;
    let scope = match fields.next() {
        Some("read") => Scope::Read,
        Some("work") => Scope::Work,
        Some("admin") => Scope::Admin,
        Some(other) => {
            return Err(format!(
                "no scope `{}`: a token's scope is read, work or admin",
                crate::escape::line(other)
            ))
        }
        None => return Err("no scope after the hash (read, work or admin)".to_owned()),
    };
    let mut agent = None;
    let mut plans = None;
    for field in fields {
        match field.split_once('=') {
            Some(("agent", name)) if !name.is_empty() => agent = Some(name.to_owned()),
            Some(("plans", ids)) => {
                let ids: Vec<String> = ids
                    .split(',')
                    .filter(|id| !id.is_empty())
                    .map(str::to_owned)
                    .collect();
                if ids.is_empty() {
                    return Err("`plans=` names no plan".to_owned());
                }
                plans = Some(ids);
            }
            _ => {
                return Err(format!(
                    "`{}` is neither agent=NAME nor plans=ID,…",
                    crate::escape::line(field)
                ))
            }
        }
    }
    if scope == Scope::Work && agent.is_none() {
        return Err("a work token acts as one agent: add agent=NAME".to_owned());
    }
    if scope != Scope::Work && agent.is_some() {
        return Err("only a work token acts as an agent (agent=NAME)".to_owned());
    }
    Ok(Credential {
        hash,
        grant: Grant {
            scope,
            agent,
            plans,
        },
    })
}

/// `sha256:` and 64 hex digits.
fn parse_hash(text: &str) -> Result<[u8; 32], String> {
    let bad = || {
        format!(
            "`{}` is not a token's hash: `sha256:` and 64 hex digits (`planc serve hash-token` prints one)",
            crate::escape::line(text)
        )
    };
    let hex = text.strip_prefix("sha256:").ok_or_else(bad)?;
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut hash = [0u8; 32];
    for (n, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * n..2 * n + 2], 16).map_err(|_| bad())?;
    }
    Ok(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_short_and_spaced_tokens_are_refused() {
        assert!(check_token(" ").unwrap_err().contains("blank"));
        assert!(check_token("\t\n").unwrap_err().contains("blank"));
        assert!(check_token("x").unwrap_err().contains("at least 16"));
        assert!(check_token("abcdefgh ijklmnopq")
            .unwrap_err()
            .contains("white space"));
        assert_eq!(check_token("0123456789abcdef"), Ok(()));
    }

    #[test]
    fn a_tokens_file_grants_each_token_its_scope() {
        let text = format!(
            "# who may do what\n{} admin\n{} work agent=builder plans=a,b\n\n{} read # dashboards\n",
            hash_token("admin-token-0123456789"),
            hash_token("work-token-0123456789"),
            hash_token("read-token-0123456789"),
        );
        let mut credentials = Credentials::default();
        credentials.add_file(&text, "tokens").unwrap();
        let admin = credentials.grant_of("admin-token-0123456789").unwrap();
        assert_eq!(admin.scope, Scope::Admin);
        let work = credentials.grant_of("work-token-0123456789").unwrap();
        assert_eq!(work.scope, Scope::Work);
        assert_eq!(work.agent.as_deref(), Some("builder"));
        assert_eq!(work.plans, Some(vec!["a".to_owned(), "b".to_owned()]));
        let read = credentials.grant_of("read-token-0123456789").unwrap();
        assert_eq!(read.scope, Scope::Read);
        assert!(credentials.grant_of("read-token-012345678").is_none());
    }

    #[test]
    fn a_bad_tokens_file_line_is_named() {
        let mut credentials = Credentials::default();
        let hash = hash_token("work-token-0123456789");
        for (line, message) in [
            ("nothex admin", "tokens:1: `nothex` is not a token's hash"),
            (&format!("{hash} root"), "tokens:1: no scope `root`"),
            (
                &format!("{hash} work"),
                "tokens:1: a work token acts as one agent",
            ),
            (
                &format!("{hash} read agent=a"),
                "tokens:1: only a work token",
            ),
            (
                &format!("{hash} read plans="),
                "tokens:1: `plans=` names no plan",
            ),
        ] {
            let error = credentials.add_file(line, "tokens").unwrap_err();
            assert!(error.starts_with(message), "{line}: {error}");
        }
        assert!(credentials
            .add_file("# nothing\n", "tokens")
            .unwrap_err()
            .contains("holds no token"));
    }

    #[test]
    fn the_hash_is_sha256_hex() {
        assert_eq!(
            hash_token("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
