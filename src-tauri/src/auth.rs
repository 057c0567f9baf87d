//! Secrets ipybox hands out (gateway and tool-server tokens, the MCP server's bearer token)
//! and how it checks them.

use http::HeaderMap;

/// A fresh random secret: 122 random bits (a version-4 UUID), as 32 hex digits.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Are `a` and `b` equal? Takes as long for every `a` of the right length, so a client
/// cannot find a secret a byte at a time by timing the answers.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Does `headers` carry `Authorization: Bearer <token>`?
pub fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|given| same_secret(given.as_bytes(), token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_bearers_must_match_whole() {
        let token = new_token();
        assert_eq!(token.len(), 32);
        assert_ne!(token, new_token());
        let mut headers = HeaderMap::new();
        assert!(!bearer_matches(&headers, &token));
        for (value, ok) in [
            (format!("Bearer {token}"), true),
            (format!("Bearer {}", &token[..31]), false),
            (format!("Bearer {token}x"), false),
            (format!("bearer {token}"), false),
            (token.clone(), false),
        ] {
            headers.insert(http::header::AUTHORIZATION, value.parse().expect("header"));
            assert_eq!(bearer_matches(&headers, &token), ok, "{value}");
        }
    }
}
