//! The formats a string field may ask for, and the check of a typed answer against one —
//! strict enough to catch a slip, not a full RFC parser: an email address, an absolute URI,
//! an RFC 3339 date or date-time.

use serde::Serialize;

/// The formats a string field may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "QuestionTextFormat"))]
#[serde(rename_all = "kebab-case")]
pub enum TextFormat {
    /// An email address.
    Email,
    /// An absolute URI (`https://…`).
    Uri,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// A date and time with its offset, `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339).
    DateTime,
}

impl TextFormat {
    pub(super) fn check(self, s: &str) -> Result<(), String> {
        let ok = match self {
            TextFormat::Email => is_email(s),
            TextFormat::Uri => is_uri(s),
            TextFormat::Date => is_date(s),
            TextFormat::DateTime => is_date_time(s),
        };
        if ok {
            return Ok(());
        }
        Err(match self {
            TextFormat::Email => "it must be an email address, like name@example.com",
            TextFormat::Uri => "it must be a full address, like https://example.com/page",
            TextFormat::Date => "it must be a date, like 2026-01-31",
            TextFormat::DateTime => {
                "it must be a date and time with its offset, like 2026-01-31T09:30:00Z"
            }
        }
        .into())
    }
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn is_date(s: &str) -> bool {
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) = (
        parts.next().and_then(|p| digits(p, 4)),
        parts.next().and_then(|p| digits(p, 2)),
        parts.next().and_then(|p| digits(p, 2)),
        parts.next(),
    ) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

fn is_date_time(s: &str) -> bool {
    let Some((date, time)) = s.split_once(['T', 't']) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let (clock, offset) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, None)
    } else if let Some(at) = time.rfind(['+', '-']) {
        (&time[..at], Some(&time[at + 1..]))
    } else {
        return false;
    };
    let hms = |t: &str, seconds: bool| {
        let mut p = t.split(':');
        let h = p.next().and_then(|x| digits(x, 2));
        let m = p.next().and_then(|x| digits(x, 2));
        let s = if seconds {
            p.next().map(|x| {
                let whole = x.split_once('.').map_or(x, |(w, f)| {
                    if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
                        "x"
                    } else {
                        w
                    }
                });
                digits(whole, 2)
            })
        } else {
            Some(Some(0))
        };
        matches!((h, m, s, p.next()), (Some(h), Some(m), Some(Some(s)), None) if h < 24 && m < 60 && s <= 60)
    };
    hms(clock, true) && offset.is_none_or(|o| hms(o, false))
}
