//! RFC 3339 UTC timestamps from the system clock, and back, with the `time`
//! crate's strict RFC 3339 format.

use std::time::{SystemTime, UNIX_EPOCH};

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// `9999-12-31T23:59:59Z`, the last second RFC 3339 can write.
const LAST_SECOND: i64 = 253_402_300_799;

/// Now, as `2026-11-23T09:56:05Z`.
pub fn now_rfc3339() -> String {
    format_unix(now_unix())
}

/// Seconds since the Unix epoch, as an RFC 3339 UTC timestamp
/// (`2026-11-23T09:56:05Z`: whole seconds, `Z`). A time past the year 9999,
/// which RFC 3339 cannot write, is written as its last second.
pub fn format_unix(secs: u64) -> String {
    let secs = i64::try_from(secs).map_or(LAST_SECOND, |s| s.min(LAST_SECOND));
    OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|instant| instant.format(&Rfc3339).ok())
        .unwrap_or_else(|| "9999-12-31T23:59:59Z".to_owned())
}

/// Seconds since the Unix epoch, now.
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// An RFC 3339 timestamp (`2026-11-23T09:56:05Z`; `T`, `t` or a space between
/// date and time; a fraction of a second and a `Z`, `z` or `±HH:MM` offset
/// allowed) as whole seconds since the Unix epoch, the fraction dropped;
/// `None` when it is not one (a day its month lacks, a second 60 that cannot
/// be a leap second, an offset of 24 hours or more), or before 1970.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let instant = OffsetDateTime::parse(text, &Rfc3339).ok()?;
    u64::try_from(instant.unix_timestamp()).ok()
}

#[cfg(test)]
mod tests {
    use super::{format_unix, parse_rfc3339};

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_unix(1_795_427_765), "2026-11-23T09:56:05Z");
        // Leap-year days: 2024 has a 29 February; 1900 and 2100 do not, 2000 does.
        assert_eq!(format_unix(1_709_164_800), "2024-02-29T00:00:00Z");
        assert_eq!(format_unix(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(format_unix(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(format_unix(4_102_444_800), "2100-01-01T00:00:00Z");
        assert_eq!(format_unix(253_402_300_799), "9999-12-31T23:59:59Z");
        assert_eq!(format_unix(253_402_300_800), "9999-12-31T23:59:59Z");
        assert_eq!(format_unix(u64::MAX), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn parses_what_it_formats_and_other_offsets() {
        for secs in [0, 951_782_400, 1_709_164_800, 1_795_427_765, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&format_unix(secs)), Some(secs));
        }
        assert_eq!(
            parse_rfc3339("2026-11-23T10:56:05.25+01:00"),
            Some(1_795_427_765)
        );
        for same in [
            "2026-11-23t09:56:05z",
            "2026-11-23 09:56:05Z",
            "2026-11-23T09:56:05+00:00",
            "2026-11-23T09:56:05-00:00",
            "2026-11-23T09:56:05.999999999Z",
            "2026-11-23T09:56:05.1234567890123Z",
            "2026-11-23T11:26:05+01:30",
            "2026-11-23T04:56:05-05:00",
            "2026-11-24T09:55:05+23:59",
            "2026-11-22T09:57:05-23:59",
        ] {
            assert_eq!(parse_rfc3339(same), Some(1_795_427_765), "{same}");
        }
        // The offset moves the day, the month and the year.
        assert_eq!(
            parse_rfc3339("2000-03-01T00:30:00+01:00"),
            Some(951_867_000)
        );
        assert_eq!(parse_rfc3339("1969-12-31T23:00:00-01:00"), Some(0));
        assert_eq!(parse_rfc3339("2024-02-29T12:00:00Z"), Some(1_709_208_000));
        // A leap second is the second before the next minute.
        assert_eq!(parse_rfc3339("2016-12-31T23:59:60Z"), Some(1_483_228_799));
    }

    #[test]
    fn malformed_and_early_times_are_none() {
        for bad in [
            "",
            "2026-11-23",
            "2026-13-01T00:00:00Z",
            "2026-11-23T09:56:05",
            "x026-11-23T09:56:05Z",
            "1969-12-31T23:59:59Z",
            "1970-01-01T00:59:59+01:00",
            "2026-02-29T00:00:00Z",
            "2100-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-00-10T00:00:00Z",
            "2026-11-00T00:00:00Z",
            "2026-11-23T24:00:00Z",
            "2026-11-23T09:60:00Z",
            "2026-11-23T09:56:60Z",
            "2026-11-23T09:56:05.Z",
            "2026-11-23T09:56:05+01",
            "2026-11-23T09:56:05+0100",
            "2026-11-23T09:56:05+24:00",
            "2026-11-23T09:56:05++1:00",
            "2026-11-23T09:56:05 Z",
            "2026-11-23T09:56:05Z ",
            "2026-11-23T09:56:05Z[UTC]",
            "2026-11-23T09:56Z",
            "20261123T095605Z",
            "+002026-11-23T09:56:05Z",
            "2026-11-23T09:56:05,5Z",
            "２026-11-23T09:56:05Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
