//! Whom a request is addressed to and where it comes from: one `Host`
//! that the server answers to (DNS rebinding), a request target that
//! agrees with it, and a browser's `Origin` that is the server's own or
//! allowed (scheme, host and port compared).

use axum::extract::Request;
use axum::http::{header, HeaderMap};

/// One `Host`, and an absolute-form request target (`GET http://a/ …`)
/// addressed to it: a second `Host`, or a target naming another authority,
/// could let a check read one name while a proxy routes by the other.
pub fn check_one_host(request: &Request) -> Result<(), String> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let host = hosts.next().and_then(|v| v.to_str().ok());
    if hosts.next().is_some() {
        return Err("the request has more than one Host header".to_owned());
    }
    let Some(target) = request.uri().authority() else {
        return Ok(());
    };
    let same = host.is_some_and(|host| {
        host_port(host, 80) == host_port(target.as_str(), 80) && host_port(host, 80).is_some()
    });
    if same {
        Ok(())
    } else {
        Err(format!(
            "the request is addressed to `{}` but its Host header says `{}`",
            crate::escape::line(target.as_str()),
            crate::escape::line(host.unwrap_or(""))
        ))
    }
}

/// The host (lower-cased, no brackets) and port of an authority
/// (`host[:port]`), the port `default` when it has none; `None` when the
/// port is not a number.
fn host_port(authority: &str, default: u16) -> Option<(String, u16)> {
    let authority = authority.trim();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        None | Some("") => default,
        Some(port) => port.parse().ok()?,
    };
    Some((host.to_ascii_lowercase(), port))
}

/// An origin's (`scheme://host[:port]`) scheme, host and port (the
/// scheme's default when it names none).
fn origin_parts(origin: &str) -> Option<(String, String, u16)> {
    let (scheme, authority) = origin.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => 0,
    };
    let authority = authority.strip_suffix('/').unwrap_or(authority);
    let (host, port) = host_port(authority, default)?;
    Some((scheme, host, port))
}

/// The host part of a `Host` header or an origin's authority (no port, no
/// brackets), lower-cased.
fn host_part(authority: &str) -> String {
    let authority = authority.trim();
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                authority
            }
        })
    };
    host.to_ascii_lowercase()
}

/// The `Host` must be one the server answers to: a page on another name
/// that resolves to this address (DNS rebinding) is refused.
pub fn check_host(config: &super::Config, headers: &HeaderMap) -> Result<(), String> {
    if config.allowed_hosts.is_empty() {
        return Ok(());
    }
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return Err("the request has no Host header".to_owned());
    };
    let name = host_part(host);
    if config.allowed_hosts.contains(&name) {
        Ok(())
    } else {
        Err(format!(
            "this server does not answer to the host `{}`; it answers to {} (`planc serve --allow-host NAME` adds one)",
            crate::escape::line(&name),
            config.allowed_hosts.join(", ")
        ))
    }
}

/// A browser's `Origin` must be the server's own (`http://` and the `Host`
/// of the request: scheme, host and port) or one allowed with
/// `--allow-origin` (compared the same way); requests without one (agents,
/// curl) pass.
pub fn check_origin(config: &super::Config, headers: &HeaderMap) -> Result<(), String> {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return Ok(());
    };
    let parts = origin_parts(origin);
    let allowed = config
        .allowed_origins
        .iter()
        .any(|o| o == origin || (parts.is_some() && origin_parts(o) == parts));
    if allowed {
        return Ok(());
    }
    let own = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|host| host_port(host, 80))
        .map(|(host, port)| ("http".to_owned(), host, port));
    if own.is_some() && own == parts {
        return Ok(());
    }
    Err(format!(
        "requests from the web origin `{}` are refused (`planc serve --allow-origin ORIGIN` allows one)",
        crate::escape::line(origin)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_part_drops_the_port_and_brackets() {
        assert_eq!(host_part("127.0.0.1:7411"), "127.0.0.1");
        assert_eq!(host_part("LocalHost"), "localhost");
        assert_eq!(host_part("[::1]:80"), "::1");
        assert_eq!(host_part("evil.example:7411"), "evil.example");
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert_eq!(
            origin_parts("http://LocalHost"),
            Some(("http".to_owned(), "localhost".to_owned(), 80))
        );
        assert_eq!(
            origin_parts("https://[::1]:8443"),
            Some(("https".to_owned(), "::1".to_owned(), 8443))
        );
        assert_eq!(origin_parts("null"), None);
        assert_eq!(
            host_port("127.0.0.1:7411", 80),
            Some(("127.0.0.1".to_owned(), 7411))
        );
        assert_eq!(
            host_port("example.com", 80),
            Some(("example.com".to_owned(), 80))
        );
        assert_eq!(host_port("example.com:x", 80), None);
    }
}
